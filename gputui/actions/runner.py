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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.audit import AuditError, AuditLog, Identity
from gputui.actions.base import (
    Action,
    Change,
    ClusterWriter,
    Plan,
    ProgressCallback,
    Result,
    WriteError,
)
from gputui.actions.permissions import Permissions, ask_identity, check_permissions
from gputui.actions.recording import RecordingWriter
from gputui.actions.registry import ACTIONS, all_permissions
from gputui.domain.model import ClusterSnapshot

_log = logging.getLogger(__name__)

#: changes dry-run per plan; a 5,000-node cordon is checked on its first nodes only
DRY_RUN_LIMIT = 20


@dataclass(frozen=True)
class DryRun:
    """What the server said of the plan's changes sent with ``dryRun=All``.

    ``refusal`` (one sentence) means the plan would fail: the dialog shows it and offers no
    confirm. ``conflict`` marks a 409 (the object changed since the plan): re-plan.
    """

    lines: tuple[str, ...] = ()
    refusal: str | None = None
    conflict: bool = False
    #: evictions a budget refuses right now: the plan may run (the drain retries them until
    #: its timeout), but the operator must not read "passed" as "the pods will go"
    held: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.refusal is None

    def summary(self) -> str:
        """One line for the audit log."""
        if self.refusal:
            return f"refused: {self.refusal}"
        text = "passed" + (f" ({len(self.lines)} checked)" if self.lines else "")
        if self.held:
            text += f"; {len(self.held)} eviction(s) refused now by a budget: {self.held[0]}"
        return text


NOT_RUN = DryRun(("not run",))


class Runner:
    """Runs actions against one cluster through ``writer``, auditing to ``audit``."""

    def __init__(self, writer: ClusterWriter, audit: AuditLog,
                 actions: Sequence[Action] = ACTIONS):
        self.writer = writer
        self.audit = audit
        self.actions = tuple(actions)
        self.permissions = Permissions(read_only=writer.read_only, pending=not writer.read_only)
        #: why the audit log cannot be written (one sentence), found by check_permissions
        self.audit_problem: str | None = None
        self._identity: Identity | None = None
        self._identity_lock = threading.Lock()

    def check_permissions(self) -> Permissions:
        """At start: every permission the actions declare, who the server says we are,
        and whether the audit log can be written (none of it in read-only mode)."""
        self.permissions = check_permissions(self.writer, all_permissions(self.actions))
        if not self.writer.read_only:
            self.audit_problem = self.audit.check()
            self.identity()
        return self.permissions

    def blocked(self, action: Action) -> str | None:
        """Why ``action`` is greyed now, or None."""
        return self.permissions.blocked(action) or self.audit_blocked()

    def plan(self, action: Action, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """The action's plan, blocked with the reason when it may not run."""
        plan = action.plan(snapshot, targets, params)
        why = self.blocked(action)
        if why and not plan.blocked:
            plan = replace(plan, blocked=why)
        return plan

    def dry_run(self, plan: Plan) -> DryRun:
        """Send the plan's first changes with ``dryRun=All``; stop at the first refusal."""
        if plan.blocked or not plan.changes:
            return NOT_RUN
        lines: list[str] = []
        held: list[str] = []
        for change in plan.changes[:DRY_RUN_LIMIT]:
            try:
                line, refused_now = self._dry_run_one(change)
            except WriteError as error:
                refusal = f"{change.summary} on {change.name}: {error.reason}"
                return DryRun((*lines, refusal), refusal, conflict=error.status == 409)
            lines.append(line)
            if refused_now:
                held.append(line)
        if len(plan.changes) > DRY_RUN_LIMIT:
            lines.append(f"checked the first {DRY_RUN_LIMIT} of {len(plan.changes)} changes")
        return DryRun(tuple(lines), held=tuple(held))

    def _dry_run_one(self, change: Change) -> tuple[str, bool]:
        """One change with ``dryRun=All``: its line, and whether a budget refuses it now
        (a 429 is news for the dialog, not a refusal of the plan)."""
        if change.verb == "patch":
            self.writer.patch(change, dry_run=True)
            return f"{change.name}: {change.summary}: accepted", False
        if change.verb == "create" and change.kind == "Pod":
            target = f"{change.namespace}/{change.name}"
            try:
                self.writer.evict(change.namespace or "", change.name, dry_run=True)
            except WriteError as error:
                if error.status == 429:
                    by = f"PodDisruptionBudget {error.budget}" if error.budget else error.reason
                    return (f"evict {target}: refused now by {by}; the drain retries it "
                            "until its timeout"), True
                if error.status == 404:
                    return f"evict {target}: already gone", False
                raise
            return f"evict {target}: allowed now", False
        return (f"{change.name}: {change.summary}: not checked (no dry run for {change.verb})",
                False)

    def identity(self) -> Identity:
        """Who the audit log names; asked of the server once (SelfSubjectReview)."""
        with self._identity_lock:
            if self._identity is None:
                self._identity = ask_identity(self.writer)
            return self._identity

    def audit_blocked(self) -> str | None:
        """Why actions are off because the audit log cannot be written (checked at start)."""
        if self.audit_problem is None:
            return None
        return (f"the audit log cannot be written ({self.audit_problem}); fix it or pass "
                "--audit-log PATH, then restart gputui")

    def apply(self, action: Action, plan: Plan, dry_run: DryRun,
              progress: ProgressCallback, cancel: threading.Event) -> Result:
        """Write the intent line, carry ``plan`` out, write the outcome line; never raises.

        Nothing is sent unless the intent line is on disk first (fail closed: the result
        says why). Refuses a blocked plan or one the dry run refused: the confirmation step
        is the only way in, and it must have seen a clean dry run. The outcome line is
        written however the apply ends (also when it raises or is interrupted).
        """
        refusal = plan.blocked or (None if dry_run.ok else dry_run.refusal or "")
        try:
            audit_id = self.audit.intent(context=self.writer.context, identity=self.identity(),
                                         plan=plan, dry_run=dry_run_verdict(dry_run))
        except AuditError as error:
            why = refusal if refusal is not None else f"nothing was sent: {error}"
            return Result(False, f"{plan.title}: not applied", error=why)
        recorder = RecordingWriter(self.writer)
        result = Result(False, f"{plan.title}: ended before it returned",
                        error="the apply was interrupted")
        interrupted: str | None = None
        try:
            if refusal is not None:
                result = Result(False, f"{plan.title}: not applied", error=refusal)
            else:
                result = self._carry_out(action, plan, recorder, progress, cancel)
        except BaseException as error:  # KeyboardInterrupt, SystemExit: audited, re-raised
            interrupted = type(error).__name__
            raise
        finally:
            stopped = getattr(cancel, "reason", None) or "cancelled"
            interrupted = result.interrupted or interrupted or (
                stopped if cancel.is_set() else None)
            result = self._close(audit_id, result, recorder, interrupted)
        return result

    def _carry_out(self, action: Action, plan: Plan, writer: ClusterWriter,
                   progress: ProgressCallback, cancel: threading.Event) -> Result:
        try:
            return action.apply(plan, writer, progress, cancel)
        except WriteError as error:
            return Result(False, f"{plan.title}: failed", error=error.reason,
                          conflict=error.status == 409)
        except Exception as error:  # noqa: BLE001 - a bug must reach the log, not kill the UI
            return Result(False, f"{plan.title}: failed",
                          error=f"{type(error).__name__}: {error}")

    def _close(self, audit_id: str, result: Result, recorder: RecordingWriter,
               interrupted: str | None) -> Result:
        """The outcome line; when it cannot be written the result says so (the change
        may have been applied: never raise here)."""
        try:
            self.audit.outcome(audit_id, result=result, done=recorder.done,
                               interrupted=interrupted)
        except AuditError as error:
            _log.error("audit outcome line %s not written: %s", audit_id, error)
            return replace(result, details=(*result.details,
                                            f"the audit outcome line was not written: {error}"))
        return result


def dry_run_verdict(dry_run: DryRun) -> str:
    """What the audit log records of the dry run: "not run" unless it checked something
    (a plan that was never dry-run must not read as "passed")."""
    if dry_run is NOT_RUN or (dry_run.ok and not dry_run.lines):
        return "not run"
    return dry_run.summary()
