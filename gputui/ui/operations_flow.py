"""``OperationsFlow``: the app's side of operations: who shows them, reopening, stopping, and
quitting.

A plain object the app holds (``app.operation_flow``); the app's message handlers hand it
their messages in one line each.

The registry (:class:`~gputui.actions.operations.Operations`) tells its observer from the
apply worker's thread; the observer only posts :class:`OperationChanged` (a newer one of the
same operation replaces an unprocessed older one). The handler, on the UI thread, hands the
operation to whoever shows it: the dialogs attached to it (the one it was confirmed in until
``b`` closed it, and any reopened from ``:ops``), the header's running line, ``:ops`` and the
node list's markers; and announces its end once (done, failed, stopped). ``x`` in ``:ops``
and quitting while operations run ask first (:class:`~gputui.ui.screens.ask.AskScreen`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol

from textual.message import Message
from textual.screen import Screen

from gputui.actions.base import Result
from gputui.actions.operations import Operation, Operations
from gputui.ui.app_host import AppSurface
from gputui.ui.contracts import ActionCompleted, ActionProgressed, OperationChanged
from gputui.ui.exit_signals import ExitGuard
from gputui.ui.screens.ask import AskScreen
from gputui.ui.screens.confirm import ConfirmScreen
from gputui.ui.screens.operations import OperationsScreen
from gputui.ui.timeline_flow import TimelineFlow
from gputui.ui.widgets.node_table import NodeTable

STOP_DETAIL = ("It stops before its next step (no further eviction or change is sent; one "
               "already on its way may still land). What it did stays as it is, and the audit "
               "log's outcome line says it was stopped (interrupted: x).")
QUIT_DETAIL = ("Quitting stops them first: no further step is sent, and each one's audit "
               "outcome line says it was interrupted by quit.")


class OperationsHost(AppSurface, Protocol):
    """What of the app the operations use: its clock, exit guard, timeline and header."""

    clock: Callable[[], float]
    exit_guard: ExitGuard
    #: the app's timeline (an ended operation's audit lines go in)
    timelines: TimelineFlow

    def post_message(self, message: Message) -> bool: ...

    def refresh_header(self) -> None: ...


class OperationsFlow:
    """This session's operations and everyone who shows them."""

    def __init__(self, host: OperationsHost) -> None:
        self.host = host
        #: this session's operations; the app's clock dates them
        self.operations = Operations(lambda: host.clock())
        self.operations.subscribe(self._operation_from_any_thread)
        #: operation id -> [(dialog showing it, whether the action flow waits on it)]
        self._dialogs: dict[str, list[tuple[ConfirmScreen, bool]]] = {}
        self._announced: set[str] = set()

    def _operation_from_any_thread(self, op: Operation) -> None:
        """The registry's observer: a message, nothing else (any thread)."""
        if self.host.exit_guard.exiting:  # leaving: the loop may be gone, nobody is shown
            return
        with contextlib.suppress(RuntimeError):  # the event loop closed under us
            self.host.post_message(OperationChanged(op))

    def attach_dialog(self, dialog: ConfirmScreen, flow: bool = True) -> None:
        """``dialog`` shows operation ``dialog.operation_id`` from now on; ``flow``: it is
        the dialog the action flow waits on (a 409 there re-plans)."""
        if dialog.operation_id is not None:
            self._dialogs.setdefault(dialog.operation_id, []).append((dialog, flow))

    # ------------------------------------------------------------------ showing
    def changed(self, operation: Operation) -> None:
        """(UI thread) ``operation`` progressed or ended: tell its dialogs, the timeline,
        the shown screen and the header; announce its end once."""
        op = self.operations.get(operation.id) or operation
        dialogs = [(d, flow) for d, flow in self._dialogs.get(op.id, ()) if not d.backgrounded]
        if op.result is not None:
            self._dialogs.pop(op.id, None)
            if op.id not in self._announced:  # first the note, then the dialog closes
                self._announced.add(op.id)
                self._notify_result(op.result, replanned=any(flow for _, flow in dialogs))
            for dialog, _ in dialogs:
                dialog.post_message(ActionCompleted(op.result))
        elif op.progress is not None:
            for dialog, _ in dialogs:
                dialog.post_message(ActionProgressed(op.progress))
        self.host.timelines.operation_changed(op.id, ended=op.result is not None)
        self.show_on(self.host.screen)
        self.host.refresh_header()

    def show_on(self, screen: Screen[object]) -> None:
        """Hand the operations to ``screen``: ``:ops`` lists them, the node list marks the
        nodes they work on."""
        if isinstance(screen, OperationsScreen):
            screen.show_operations(self.operations.all())
            return
        busy = self.operations.busy_nodes()
        for table in screen.query(NodeTable):
            table.show_busy(busy)

    def _notify_result(self, result: Result, replanned: bool = True) -> None:
        """The end of an operation; a 409 is said only when no dialog re-plans it."""
        if result.conflict and replanned:
            return  # the flow re-plans and says so
        notify = self.host.notify
        if result.ok:
            notify(result.summary, title="Done")
        elif result.cancelled:
            notify(result.summary, title="Stopped", severity="warning")
        else:
            detail = f"\n{result.error}" if result.error else ""
            notify(result.summary + detail, title="Failed", severity="error",
                        timeout=15)

    # ------------------------------------------------------------------ :ops keys
    def open(self, op_id: str) -> None:
        """``enter`` in ``:ops``: the operation's progress dialog, reattached."""
        op = self.operations.get(op_id)
        if op is None:
            return
        dialog = ConfirmScreen.reattach(op)
        if op.running:
            self.attach_dialog(dialog, flow=False)
        self.host.push_screen(dialog)
        if op.running and op.progress is not None:
            dialog.post_message(ActionProgressed(op.progress))

    def stop(self, op_id: str) -> None:
        """``x`` in ``:ops``: ask, then stop (the audit outcome says ``interrupted: x``)."""
        op = self.operations.get(op_id)
        if op is None or not op.running:
            return

        def answered(yes: bool | None) -> None:
            if yes and self.operations.stop(op.id, "x"):
                self.host.notify(f"{op.title}: stopping", title="Stopping",
                                 severity="warning")

        self.host.push_screen(AskScreen(f"Stop {op.title}?", STOP_DETAIL, "Stop it",
                                   "Keep it running"), callback=answered)

    # ------------------------------------------------------------------ quitting
    def ask_quit(self) -> bool:
        """Quitting with operations running asks first (stop them, or stay); True when it
        asked (the caller must not quit now)."""
        running = self.operations.running()
        if not running or self.host.exit_guard.exiting:
            return False
        if isinstance(self.host.screen, AskScreen):
            return True  # already asking

        def answered(yes: bool | None) -> None:
            if yes:
                self.host.exit_guard.begin("quit", 0)

        names = "\n".join(f"⟳ {op.glance()}" for op in running[:6])
        count = f"{len(running)} operation{'s' if len(running) != 1 else ''}"
        self.host.push_screen(AskScreen(f"{count} running: stop and quit?",
                                   f"{names}\n\n{QUIT_DETAIL}", "Stop and quit", "Stay"),
                         callback=answered)
        return True
