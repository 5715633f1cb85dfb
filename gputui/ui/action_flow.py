"""``ActionFlow``: the app's side of an action: prompts, plan, dialog, dry run and apply in
workers.

A plain object the app holds (``app.actions``). A key press (or palette entry, or ``:``
name) runs ``act('<id>')`` on the app, which hands it here; its targets are the selection
of the view the operator is in (:meth:`ActionFlow.view_selection`:
the node list's marks or cursor, the upgrade lanes' node, the MIG card, a finding's node...,
see :mod:`gputui.ui.selection`), never another view's cursor; a view with nothing selected
says why and nothing is sent. The progress dialog's ``u`` after a stopped drain sends
:class:`ActionRequested` with the nodes it left cordoned. Then, in order:
refuse at once when the action is greyed (read-only, denied, no cluster connection); ask
each :class:`~gputui.actions.base.ParamSpec` with :class:`ParamPrompt`; plan from the
latest snapshot (refused when a running operation holds a target); open
:class:`ConfirmScreen`; dry-run in a thread worker; on ``y`` start an operation
(:mod:`gputui.actions.operations`) and apply in a thread worker whose progress and result go
to the registry, which the app forwards to the dialog, the header and ``:ops``
(:mod:`gputui.ui.operations_flow`); notify the result. ``b`` closes the dialog and the
worker runs on. The table then shows the change when the watch delivers it, like any other
change. An exception while prompting or planning is one sentence, never the end of the app.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from textual.actions import ActionParseResult
from textual.actions import parse as parse_action
from textual.command import CommandPalette
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker

from gputui.actions.base import Action, Plan, PlansFromServer, Progress, Result, Scope
from gputui.actions.operations import NodesHeld, Operation
from gputui.actions.registry import ACTIONS, action
from gputui.actions.runner import DryRun, Runner
from gputui.domain.model import ClusterSnapshot
from gputui.session import Session
from gputui.ui.app_host import AppSurface
from gputui.ui.contracts import (
    ActionBlocks,
    ActionCompleted,
    ActionGate,
    ApplyRequested,
    DryRunFinished,
    DryRunProgressed,
)
from gputui.ui.crash import worker_failure
from gputui.ui.exit_signals import ExitGuard
from gputui.ui.operations_flow import OperationsFlow
from gputui.ui.replay_controls import READ_ONLY
from gputui.ui.screens.command_line import CommandLine
from gputui.ui.screens.confirm import ConfirmScreen, ParamPrompt
from gputui.ui.selection import SaysWhyNot, Selection, SelectsNodes

NO_RUNNER = "no cluster connection for actions in this session"
#: how often a plan that met a 409 is re-made before giving up
MAX_REPLANS = 3
#: seconds to wait for the watch to bring the newer object before re-planning
REPLAN_WAIT = 5.0
REPLANNED = "re-planned: the cluster changed since the first plan (409); check it again"


def greyed_action(action: str | ActionParseResult) -> str | None:
    """The action id of an ``act('<id>')`` binding (what the registry greys), else None."""
    _, name, params = parse_action(action) if isinstance(action, str) else action
    return str(params[0]) if name == "act" and params else None


class ActionHost(AppSurface, Protocol):
    """What of the app an action uses: the session (its runner), the newest snapshot and
    the exit guard (an apply is stopped by quit and signals)."""

    session: Session
    snapshot: ClusterSnapshot
    exit_guard: ExitGuard


class ActionFlow:
    """Everything between a key press and the audit line."""

    def __init__(self, host: ActionHost, operations: OperationsFlow) -> None:
        self.host = host
        #: who shows the operations an apply starts
        self.operation_flow = operations
        #: this session's operations (a running one holds its nodes: plans refuse them)
        self.operations = operations.operations
        #: the title of the action being planned (its failure names it)
        self._planning = ""
        #: the last action-flow worker (prompts, plan, dialog); open until it finishes
        self._flow: Worker[None] | None = None
        #: dry runs still sending (a dialog closed stops them at the next request)
        self._dry_runs = 0
        self._dry_lock = threading.Lock()

    @property
    def runner(self) -> Runner | None:
        """The shown session's runner; None: every action is greyed."""
        return self.host.session.runner

    @property
    def open(self) -> bool:
        """An action is being prompted, planned, confirmed or dry-run (its plan is for the
        cluster shown: a ``:ctx`` switch waits, or closes it)."""
        flow = self._flow
        return (flow is not None and not flow.is_finished) or self._dry_runs > 0

    @property
    def busy(self) -> bool:
        """An action is open, or an operation is applying (the one answer to "is an action
        running?": a retired context's writer is closed only when this is False)."""
        return self.open or bool(self.operations.running())

    def close_open(self) -> bool:
        """Close the open action unsent (its plan was for the context left); whether one
        was open."""
        flow = self._flow
        if flow is None or flow.is_finished:
            return False
        flow.cancel()
        return True

    def blocks(self) -> ActionBlocks:
        """action id -> why it is greyed, for every greyed action (help, palette, footer)."""
        if self.runner is None:
            reason = READ_ONLY if self.host.session.replay is not None else NO_RUNNER
            return {act.id: reason for act in ACTIONS}
        return {act.id: why for act in ACTIONS if (why := self.runner.blocked(act))}

    def check_permissions(self) -> None:
        """SelfSubjectAccessReview for every permission, the SelfSubjectReview and the
        audit log's path, once, off the UI thread (a failure is said by the app's one
        worker-failure path, ``worker_errors``)."""
        self.host.run_worker(self._check_permissions, thread=True, exclusive=True,
                             group="permissions", exit_on_error=False)

    def _check_permissions(self) -> None:
        if self.runner is None:
            return
        self.runner.check_permissions()
        self.host.call_from_thread(self.permissions_known)

    def permissions_known(self) -> None:
        """Tell the screens which actions are greyed (attributes down) and redraw keys."""
        self.hand_down_blocks(self.host.screen_stack)
        self.host.refresh_bindings()
        why = self.runner.audit_blocked() if self.runner is not None else None
        if why:  # said once, at start: every action is refused with it from now on
            self.host.notify(f"Actions are disabled: {why}", title="Audit log",
                        severity="error", timeout=30)

    def hand_down_blocks(self, screens: Iterable[Screen[Any]]) -> None:
        """The one way greyed actions reach the screens: one value, through the contract."""
        blocks = self.blocks()
        for screen in screens:
            if isinstance(screen, ActionGate):
                screen.show_blocks(blocks)

    def answered_at_once(self, action: str | ActionParseResult,
                         default_namespace: DOMNode | None = None) -> bool:
        """Whether a key binding (or palette entry) was answered here, before Textual runs
        it (the app's ``run_action`` asks first; True: Textual must not run it).

        Textual drops a binding its ``check_action`` greys without a word, so ``c`` in
        ``--read-only`` or under an RBAC denial did nothing visible. A greyed action is
        answered at once with its reason (:meth:`start`, which sends nothing); the footer
        and help still show it greyed, since ``check_action`` still says so. A key its
        screen hides says why too.
        """
        refused = greyed_action(action)
        if refused is not None and refused in self.blocks():
            self.start(refused, Selection())
            return True
        if isinstance(default_namespace, SaysWhyNot):
            _, name, params = parse_action(action) if isinstance(action, str) else action
            why = None if default_namespace.check_action(name, params) \
                else default_namespace.why_not(name)
            if why:
                self.host.notify(why, severity="warning")
                return True
        return False

    def act(self, action_id: str) -> None:
        """Every action key, ``:`` name and palette entry: on the selection of the view the
        operator is in (cluster-wide actions take no node targets)."""
        self.start(action_id, self.view_selection())

    def view_selection(self) -> Selection:
        """The selection of the screen the operator is in: the top screen, looking through
        the ``:`` line and the palette (gone or going when their command runs). A screen
        that selects no node (help, a pod log) says so; the node list under it is never
        asked in its place."""
        for screen in reversed(self.host.screen_stack):
            if isinstance(screen, (CommandLine, CommandPalette)):
                continue
            if isinstance(screen, SelectsNodes):
                return screen.selected_nodes()
            return Selection(why_none="this screen selects no node (esc, then choose one "
                                      "in a view)")
        return Selection()

    def start(self, action_id: str, selection: Selection | Sequence[str]) -> None:
        """Refuse greyed actions with the reason; otherwise prompt, plan and confirm on
        ``selection`` (node actions; a cluster-wide action takes no node targets). Names
        given instead of a selection are taken as they are (tests, the dialog's offer)."""
        act = action(action_id)
        if not isinstance(selection, Selection):
            selection = Selection(tuple(selection))
        targets = selection.nodes if act.scope is Scope.NODES else ()
        why = self.blocks().get(act.id)
        notify = self.host.notify
        if why:
            notify(f"{act.title} is not available: {why}", severity="warning")
            return
        loading = self.host.snapshot.loading
        if loading:  # a plan from half the cluster would state guesses as
            # facts ("no ClusterPolicy", "no pods to evict"): wait for the lists
            notify(f"{act.title} is not available yet: still reading "
                   f"{', '.join(sorted(loading))}; try again in a moment", severity="warning")
            return
        if act.scope is Scope.NODES and not targets:
            notify(f"{act.title}: {selection.why_none}; nothing was sent", severity="warning")
            return
        self.plan_in_worker(act, tuple(targets))

    def plan_in_worker(self, act: Action, targets: tuple[str, ...]) -> None:
        """:meth:`_plan_and_confirm` as the one ``action-flow`` worker: an exception in an
        action's ``plan()`` (or a prompt's choices) is one scrubbed sentence naming the
        action (:meth:`planning_failed`) and the app stays."""
        self._planning = act.title
        self._flow = self.host.run_worker(self._plan_and_confirm(act, targets),
                                          exclusive=True, group="action-flow",
                                          exit_on_error=False)

    def planning_failed(self, line: str) -> str:
        """The action-flow worker's recovery: nothing was sent; say which action."""
        return f"{self._planning}: {line}; nothing was sent"

    async def _plan_and_confirm(self, act: Action, targets: tuple[str, ...]) -> None:
        """Prompts, then plan and dialog; a 409 re-plans from a newer snapshot and asks
        again (at most :data:`MAX_REPLANS` times)."""
        runner = self.runner
        assert runner is not None
        params = await self._ask_params(act, targets)
        if params is None:
            return
        replan: Plan | None = None
        attempt = 0
        while attempt <= MAX_REPLANS:
            # an action that re-read the changed object re-planned already (Result.replan);
            # in a thread: a drain's plan lists the node's pods from the server
            if replan is None:
                replan = await asyncio.to_thread(runner.plan, act, self.host.snapshot,
                                                 targets, params)
            elif isinstance(act, PlansFromServer) and not replan.blocked:
                # the action's own re-plan is made from its re-read object alone
                replan = await asyncio.to_thread(act.server_plan, replan, runner.writer)
            plan = self.operations.refuse_held(replan)
            if attempt:
                plan = replace(plan, warnings=(REPLANNED, *plan.warnings))
            dialog = ConfirmScreen(plan, act, targets=targets)
            outcome = self.host.push_screen(dialog, wait_for_dismiss=True)
            if not plan.blocked:
                self._dry_run(dialog)
            if await outcome is not None:
                return
            if dialog.options_requested:  # o: the same action with other values
                params = await self._ask_params(act, targets, params)
                if params is None:
                    return
                replan, attempt = None, 0
                continue
            attempt += 1
            self.host.notify(f"{plan.title}: the cluster changed since the plan (409); "
                             "re-planning from the latest state", severity="warning")
            replan = dialog.result.replan if dialog.result is not None else None
            if replan is None:
                await self._newer_snapshot()
        self.host.notify(f"{act.title}: still conflicting after {MAX_REPLANS} re-plans; "
                         "nothing applied", severity="error")

    async def _ask_params(self, act: Action, targets: tuple[str, ...],
                          previous: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """Each ParamSpec in order (the values given before, if any, offered first); None
        when the operator cancels one."""
        params: dict[str, Any] = {}
        snapshot = self.host.snapshot
        for spec in act.params:
            choices = spec.choices(snapshot, targets) if spec.choices else ()
            default = spec.default(snapshot, targets) if spec.default else ""
            if previous is not None and spec.name in previous:
                default = str(previous[spec.name])
            value = await self.host.push_screen_wait(ParamPrompt(act.title, spec, choices, default,
                                                            targets=targets))
            if value is None:
                return None
            params[spec.name] = value
        return params

    async def _newer_snapshot(self, timeout: float = REPLAN_WAIT) -> None:
        """Wait (briefly) for the watch to deliver the change that made the plan stale."""
        seen = self.host.snapshot
        deadline = time.monotonic() + timeout
        while self.host.snapshot is seen and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def _dry_run(self, dialog: ConfirmScreen) -> None:
        """Every write with ``dryRun=All`` in a thread worker; the dialog counts the answers
        as they come and closing it stops the rest."""
        self.host.run_worker(lambda: self._dry_run_now(dialog), thread=True, group="dry-run",
                             exit_on_error=False)

    def _dry_run_now(self, dialog: ConfirmScreen) -> None:
        with self._dry_lock:
            self._dry_runs += 1
        try:
            self._dry_run_sent(dialog)
        finally:
            with self._dry_lock:
                self._dry_runs -= 1

    def _dry_run_sent(self, dialog: ConfirmScreen) -> None:
        assert self.runner is not None

        def progress(done: int, total: int) -> None:
            dialog.post_message(DryRunProgressed(done, total))

        try:
            dry_run = self.runner.dry_run(dialog.plan, progress, dialog.dry_run_stop)
        except Exception as error:  # noqa: BLE001 - a bug here is a refusal, never the end
            why = worker_failure("the dry run", error)
            dry_run = DryRun((why,), refusal=why, total=len(dialog.plan.changes))
        dialog.post_message(DryRunFinished(dry_run))

    def apply_requested(self, message: ApplyRequested) -> None:
        """``y``: start an operation (claiming its nodes, fail closed) and apply it."""
        dialog = message.dialog
        if not isinstance(dialog, ConfirmScreen):  # only the confirm dialog asks to apply
            return
        runner = self.runner  # held by the operation: a :ctx switch never redirects it
        if runner is None:  # a dialog opened without a cluster (tests, replays)
            dialog.post_message(ActionCompleted(Result(False, "not applied", error=NO_RUNNER)))
            return
        act = message.action or action(message.plan.action_id)
        try:
            op = self.operations.begin(message.plan, message.dry_run, message.cancel, act)
        except NodesHeld as held:  # planned before the other one started: refused now
            dialog.post_message(ActionCompleted(Result(False, f"{message.plan.title}: not "
                                                       "applied", error=str(held))))
            return
        dialog.operation_id = op.id
        self.operation_flow.attach_dialog(dialog)
        self.host.run_worker(lambda: self._apply(op, runner), thread=True, group="apply",
                             exit_on_error=False)

    def _apply(self, op: Operation, runner: Runner) -> None:
        """(apply worker) The blocking apply with the runner of the context it was
        confirmed in; progress and the result go to the operations registry, which the app
        forwards to whoever shows the operation (dialog, header, ``:ops``)."""
        act = op.action or action(op.plan.action_id)

        def progress(report: Progress) -> None:
            self.operations.progressed(op.id, report)

        # SIGHUP, SIGTERM and quit stop it at once; the exit waits (briefly) for its outcome
        self.host.exit_guard.track(op.cancel)
        try:
            result = runner.apply(act, op.plan, op.dry_run, progress, op.cancel,
                                  audit_id=op.id)
        finally:
            self.host.exit_guard.finished(op.cancel)
        self.operations.finished(op.id, result)  # no UI here: safe while the app leaves
