"""From a plan to the cluster: permission check, server-side dry run, apply, audit lines.

The UI calls these in order, each in a worker thread (they block on HTTP):

1. :meth:`Runner.check_permissions` once at start (SelfSubjectAccessReview per permission,
   a SelfSubjectReview for the audit log's ``user``, the audit log's path checked).
2. :meth:`Runner.plan` when a key is pressed: the action's plan, blocked when read-only or
   denied, so the dialog shows why instead of a confirm button.
3. :meth:`Runner.dry_run` while the dialog is open: every change is sent with
   ``dryRun=All``; a refusal is shown in the dialog and the plan cannot be confirmed.
4. :meth:`Runner.apply` after ``y``: the audit intent line (fsync'd; nothing is sent when
   it cannot be written), the action's own apply through a writer that records every write
   done, then the outcome line with the same id, whatever happened. No textual here: the
   same runner drives tests and the app.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.audit import AuditError, AuditLog, Identity
from gputui.actions.base import (
    Action,
    Change,
    ClusterWriter,
    Plan,
    PlansFromServer,
    ProgressCallback,
    Result,
    WriteError,
)
from gputui.actions.guard import guarded, mark_interrupted
from gputui.actions.permissions import (
    READ_ONLY_REASON,
    Permissions,
    ask_identity,
    check_permissions,
)
from gputui.actions.registry import ACTIONS, all_permissions
from gputui.actions.which_cluster import ask_cluster
from gputui.actions.write_log import WriteLog
from gputui.domain.cluster_id import ClusterId
from gputui.domain.model import ClusterSnapshot
from gputui.sources.retry import RateLimiter

_log = logging.getLogger(__name__)

#: dry-run requests in flight at once: a few threads, so a 5,000-node cordon is checked
#: in the time the rate limit allows rather than one round trip after another
DRY_RUN_WORKERS = 8
#: the most dry-run requests a second (and at once), the same bound the read client keeps
#: (:class:`~gputui.sources.retry.RateLimiter`): checking a big plan must not flood the server
DRY_RUN_RATE = 50.0
DRY_RUN_BURST = 100


@dataclass(frozen=True)
class DryRun:
    """What the server said of the plan's writes sent with ``dryRun=All``.

    ``refusal`` (one sentence) means the plan would fail: the dialog shows it and offers no
    confirm. ``conflict`` marks a 409 (the object changed since the plan): re-plan.
    ``unchecked`` names the writes the server was not asked about (and why): a plan with any
    is not confirmable, and ``nothing`` (a plan with no writes) is never "passed".
    """

    lines: tuple[str, ...] = ()
    refusal: str | None = None
    conflict: bool = False
    #: evictions a budget refuses right now: the plan may run (the drain retries them until
    #: its timeout), but the operator must not read "passed" as "the pods will go"
    held: tuple[str, ...] = ()
    #: writes the server accepted with ``dryRun=All``, of ``total`` in the plan
    checked: int = 0
    total: int = 0
    #: writes not dry-run, one line each with the reason
    unchecked: tuple[str, ...] = ()
    #: the plan has no write at all
    nothing: bool = False
    #: no dry run was asked (a blocked plan)
    not_run: bool = False

    @property
    def ok(self) -> bool:
        """Confirmable: every write was checked and none refused."""
        return (self.refusal is None and not self.unchecked and not self.nothing
                and not self.not_run and 0 < self.total == self.checked)

    @property
    def verdict(self) -> str:
        """The first words of the dialog's status line and of the audit's ``dry_run``."""
        if self.not_run:
            return "not run"
        if self.refusal:
            return "refused"
        if self.nothing:
            return "nothing to change"
        if self.unchecked or not 0 < self.total == self.checked:
            return "incomplete"
        return "passed"

    def summary(self) -> str:
        """One line for the audit log and the dialog: the verdict and what was checked."""
        verdict = self.verdict
        if verdict == "refused":
            return f"refused: {self.refusal}"
        if verdict in ("not run", "nothing to change"):
            return verdict
        writes = f"write{'s' if self.total != 1 else ''}"
        text = f"{verdict} ({self.checked} of {self.total} {writes} checked)"
        if self.unchecked:
            text += f"; not checked: {self.unchecked[0]}"
            if len(self.unchecked) > 1:
                text += f" and {len(self.unchecked) - 1} more"
        if self.held:
            text += f"; {len(self.held)} eviction(s) refused now by a budget: {self.held[0]}"
        return text


#: told ``(done, total)`` as the dry run's answers arrive
DryRunProgress = Callable[[int, int], None]

NOT_RUN = DryRun(("not run",), not_run=True)
NOTHING = DryRun(("nothing to change: the plan sends no write",), nothing=True)


@dataclass(frozen=True)
class _Checked:
    """One write's dry run: its line, and how it counts."""

    line: str
    held: bool = False
    unchecked: bool = False
    error: WriteError | None = None


class Runner:
    """Runs actions against one cluster through ``writer``, auditing to ``audit``."""

    def __init__(self, writer: ClusterWriter, audit: AuditLog,
                 actions: Sequence[Action] = ACTIONS, read_only_reason: str | None = None):
        self.writer = writer
        self.audit = audit
        self.actions = tuple(actions)
        #: why a read-only writer refuses (a read-only context says which glob); None: the flag
        self.read_only_reason = read_only_reason or READ_ONLY_REASON
        self.permissions = Permissions(read_only=writer.read_only, pending=not writer.read_only,
                                       read_only_reason=self.read_only_reason)
        #: why the audit log cannot be written (one sentence), found by check_permissions
        self.audit_problem: str | None = None
        self._identity: Identity | None = None
        self._identity_lock = threading.Lock()
        self._cluster: ClusterId | None = None

    def check_permissions(self) -> Permissions:
        """At start: every permission the actions declare, who the server says we are,
        and whether the audit log can be written (none of it in read-only mode)."""
        permissions = replace(check_permissions(self.writer, all_permissions(self.actions)),
                              read_only_reason=self.read_only_reason)
        if not self.writer.read_only:
            self.audit_problem = self.audit.check()
            self.identity()
            self.cluster()
        # published last: once the UI sees the permissions, the start-up reads are done
        self.permissions = permissions
        return permissions

    def blocked(self, action: Action) -> str | None:
        """Why ``action`` is greyed now, or None."""
        return self.permissions.blocked(action) or self.audit_blocked()

    def plan(self, action: Action, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """The action's plan, blocked with the reason when it may not run; an action that
        writes what only the server knows (a drain's pods) completes it from a fresh read,
        so the plan lists every write the apply will send. Blocks on HTTP for those."""
        plan = action.plan(snapshot, targets, params)
        why = self.blocked(action)
        if why and not plan.blocked:
            plan = replace(plan, blocked=why)
        if isinstance(action, PlansFromServer) and not plan.blocked:
            plan = action.server_plan(plan, self.writer)  # blocking: a fresh list (drains)
        return plan

    def dry_run(self, plan: Plan, progress: DryRunProgress | None = None,
                stop: threading.Event | None = None) -> DryRun:
        """Send every write of the plan with ``dryRun=All``, a few at a time under the rate
        limit; the first refusal (in plan order) refuses the plan and no further write is
        sent after it is seen. ``progress(done, total)`` is told as answers arrive (a
        5,000-node plan takes its time); ``stop`` (the dialog closed) sends no more."""
        if plan.blocked:
            return NOT_RUN
        if not plan.changes:
            return NOTHING
        results = self._dry_run_all(plan.changes, progress, stop or threading.Event())
        lines: list[str] = []
        for change, checked in zip(plan.changes, results, strict=True):
            if checked is None:
                continue  # not sent: an earlier write was refused, or the dry run stopped
            if checked.error is not None:
                error = checked.error
                refusal = f"{change.summary} on {change.name}: {error.reason}"
                return DryRun((*lines, refusal), refusal, conflict=error.status == 409,
                              checked=len(lines), total=len(plan.changes))
            lines.append(checked.line)
        unchecked = [c.line for c in results if c and c.unchecked]
        skipped = sum(1 for c in results if c is None)
        if skipped:
            unchecked.append(f"{skipped} write{'s' if skipped != 1 else ''} not sent: the dry "
                             "run was stopped")
        return DryRun(tuple(lines), held=tuple(c.line for c in results if c and c.held),
                      checked=sum(1 for c in results if c and not c.unchecked),
                      total=len(plan.changes), unchecked=tuple(unchecked))

    def _dry_run_all(self, changes: Sequence[Change], progress: DryRunProgress | None,
                     stop: threading.Event) -> list[_Checked | None]:
        """Each change's dry run, in plan order; None for those not sent (after a refusal,
        or once ``stop`` is set)."""
        limiter = RateLimiter(DRY_RUN_RATE, DRY_RUN_BURST)
        lock = threading.Lock()
        done = [0]
        refused = threading.Event()

        def one(change: Change) -> _Checked | None:
            if stop.is_set() or refused.is_set():
                return None
            limiter.acquire()
            if stop.is_set() or refused.is_set():
                return None
            try:
                line, held, unchecked = self._dry_run_one(change)
                checked = _Checked(line, held, unchecked)
            except WriteError as error:
                refused.set()  # the plan is refused: no further write is worth asking about
                checked = _Checked("", error=error)
            with lock:
                done[0] += 1
                if progress is not None:
                    progress(done[0], len(changes))
            return checked

        if len(changes) == 1:
            return [one(changes[0])]
        with ThreadPoolExecutor(min(DRY_RUN_WORKERS, len(changes)),
                                thread_name_prefix="gputui-dry-run") as pool:
            return list(pool.map(one, changes))

    def _dry_run_one(self, change: Change) -> tuple[str, bool, bool]:
        """One change with ``dryRun=All``: its line, whether a budget refuses it now (a 429
        is news for the dialog, not a refusal of the plan), and whether it went unchecked
        (a verb the server cannot dry-run: the plan may then not be confirmed)."""
        if change.verb == "patch":
            self.writer.patch(change, dry_run=True)
            return f"{change.name}: {change.summary}: accepted", False, False
        if change.verb == "create" and change.kind == "Pod":
            target = f"{change.namespace}/{change.name}"
            try:
                self.writer.evict(change.namespace or "", change.name, dry_run=True)
            except WriteError as error:
                if error.status == 429:
                    by = f"PodDisruptionBudget {error.budget}" if error.budget else error.reason
                    return (f"evict {target}: refused now by {by}; the drain retries it "
                            "until its timeout"), True, False
                if error.status == 404:
                    return f"evict {target}: already gone", False, False
                raise
            return f"evict {target}: allowed now", False, False
        return (f"{change.kind} {change.name}: {change.summary}: not checked (gputui cannot "
                f"dry-run a {change.verb!r} write)"), False, True

    def identity(self) -> Identity:
        """Who the audit log names; asked of the server once (SelfSubjectReview)."""
        with self._identity_lock:
            if self._identity is None:
                self._identity = ask_identity(self.writer)
            return self._identity

    def cluster(self) -> ClusterId:
        """Which cluster the audit log names (server URL and ``kube-system`` UID); asked of
        the server until it answers (:func:`~gputui.actions.which_cluster.ask_cluster`)."""
        with self._identity_lock:
            if self._cluster is not None:
                return self._cluster
        found, final = ask_cluster(self.writer)  # not under the lock: a GET may take time
        if final:
            with self._identity_lock:
                self._cluster = found
        return found

    def audit_blocked(self) -> str | None:
        """Why actions are off because the audit log cannot be written (checked at start)."""
        if self.audit_problem is None:
            return None
        return (f"the audit log cannot be written ({self.audit_problem}); fix it or pass "
                "--audit-log PATH, then restart gputui")

    def apply(self, action: Action, plan: Plan, dry_run: DryRun,
              progress: ProgressCallback, cancel: threading.Event,
              audit_id: str | None = None) -> Result:
        """Write the intent line, carry ``plan`` out, write the outcome line; never raises.

        Nothing is sent unless the intent line is on disk first (fail closed: the result
        says why). Refuses a blocked plan or one the dry run refused: the confirmation step
        is the only way in, and it must have seen a clean dry run. The outcome line is
        written however the apply ends (also when it raises or is interrupted).
        ``audit_id``: the id the audit lines carry (an operation's), else a new one.
        """
        refusal = plan.blocked or (None if dry_run.ok else dry_run.refusal or "")
        try:
            audit_id = self.audit.intent(context=self.writer.context, identity=self.identity(),
                                         plan=plan, dry_run=dry_run_verdict(dry_run),
                                         audit_id=audit_id, cluster=self.cluster())
        except AuditError as error:
            why = refusal if refusal is not None else f"nothing was sent: {error}"
            return Result(False, f"{plan.title}: not applied", error=why)
        write_log = WriteLog(self.writer)
        result = Result(False, f"{plan.title}: ended before it returned",
                        error="the apply was interrupted")
        interrupted: str | None = None
        try:
            if refusal is not None:
                result = Result(False, f"{plan.title}: not applied", error=refusal)
            else:
                result = self._carry_out(action, plan, write_log, progress, cancel)
        except BaseException as error:  # KeyboardInterrupt, SystemExit: audited, re-raised
            interrupted = type(error).__name__
            raise
        finally:
            stopped = getattr(cancel, "reason", None) or "cancelled"
            interrupted = result.interrupted or interrupted or (
                stopped if cancel.is_set() else None)
            result = self._close(audit_id, result, write_log, interrupted)
        return result

    def _carry_out(self, action: Action, plan: Plan, writer: ClusterWriter,
                   progress: ProgressCallback, cancel: threading.Event) -> Result:
        try:
            # guarded: nothing is sent after the cancel, and no answer awaited
            result = action.apply(plan, guarded(writer, cancel), progress, cancel)
        except WriteError as error:
            result = Result(False, f"{plan.title}: failed", error=error.reason,
                            conflict=error.status == 409)
        except Exception as error:  # noqa: BLE001 - a bug must reach the log, not kill the UI
            result = Result(False, f"{plan.title}: failed",
                            error=f"{type(error).__name__}: {error}")
        return mark_interrupted(result, cancel)

    def _close(self, audit_id: str, result: Result, write_log: WriteLog,
               interrupted: str | None) -> Result:
        """The outcome line; when it cannot be written the result says so (the change
        may have been applied: never raise here)."""
        try:
            self.audit.outcome(audit_id, result=result, done=write_log.done,
                               interrupted=interrupted)
        except AuditError as error:
            _log.error("audit outcome line %s not written: %s", audit_id, error)
            return replace(result, details=(*result.details,
                                            f"the audit outcome line was not written: {error}"))
        return result


def dry_run_verdict(dry_run: DryRun) -> str:
    """What the audit log records of the dry run: "not run" unless it checked something
    (a plan that was never dry-run must not read as "passed")."""
    never_asked = dry_run.total == 0 and not dry_run.nothing and dry_run.refusal is None
    if dry_run.not_run or never_asked:
        return "not run"
    return dry_run.summary()
