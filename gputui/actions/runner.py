"""From a plan to the cluster: permission check, server-side dry run, apply, one audit line.

The UI calls these in order, each in a worker thread (they block on HTTP):

1. :meth:`Runner.check_permissions` once at start (SelfSubjectAccessReview per permission).
2. :meth:`Runner.plan` when a key is pressed: the action's plan, blocked when read-only or
   denied, so the dialog shows why instead of a confirm button.
3. :meth:`Runner.dry_run` while the dialog is open: every change is sent with
   ``dryRun=All``; a refusal is shown in the dialog and the plan cannot be confirmed.
4. :meth:`Runner.apply` after ``y``: the action's own apply, then one audit line, whatever
   happened. No textual here: the same runner drives tests and the app.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.audit import AuditLog
from gputui.actions.base import (
    Action,
    Change,
    ClusterWriter,
    Plan,
    ProgressCallback,
    Result,
    WriteError,
)
from gputui.actions.guard import guarded, mark_interrupted
from gputui.actions.permissions import Permissions, check_permissions
from gputui.actions.registry import ACTIONS, all_permissions
from gputui.domain.model import ClusterSnapshot

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

    def check_permissions(self) -> Permissions:
        """Ask once for every permission the actions declare (none in read-only mode)."""
        self.permissions = check_permissions(self.writer, all_permissions(self.actions))
        return self.permissions

    def blocked(self, action: Action) -> str | None:
        """Why ``action`` is greyed now, or None."""
        return self.permissions.blocked(action)

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

    def apply(self, action: Action, plan: Plan, dry_run: DryRun,
              progress: ProgressCallback, cancel: threading.Event) -> Result:
        """Carry ``plan`` out and append one audit line; never raises.

        Refuses (and audits the refusal) a blocked plan or one the dry run refused: the
        confirmation step is the only way in, and it must have seen a clean dry run.
        """
        if plan.blocked or not dry_run.ok:
            why = plan.blocked or dry_run.refusal or ""
            result = Result(False, f"{plan.title}: not applied", error=why)
        else:
            try:
                # guarded: nothing is sent after the cancel, and no answer awaited
                result = action.apply(plan, guarded(self.writer, cancel), progress, cancel)
            except WriteError as error:
                result = Result(False, f"{plan.title}: failed", error=error.reason,
                                conflict=error.status == 409)
            except Exception as error:  # noqa: BLE001 - a bug must reach the log, not kill the UI
                result = Result(False, f"{plan.title}: failed",
                                error=f"{type(error).__name__}: {error}")
            result = mark_interrupted(result, cancel)
        self.audit.record(context=self.writer.context, user=self.writer.user, plan=plan,
                          dry_run=dry_run.summary(), result=result)
        return result
