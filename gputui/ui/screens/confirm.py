"""The one confirmation dialog every action goes through, and the prompt for its values.

:class:`ConfirmScreen` shows a :class:`~gputui.actions.base.Plan` (targets, the exact change,
the kubectl equivalent, steps, impact, warnings), then the server-side dry run's answer when
it arrives. ``y`` confirms only once the dry run passed (and, for a cluster-wide change, once
the operator typed ``plan.confirm_text``); ``n``/``esc`` cancel. Destructive plans open with
focus on Cancel. After ``y`` the dialog stays open as the progress panel (pods left, which
are blocked and by which budget); ``esc`` then stops further steps, and ``b`` closes the
dialog while the action keeps running as a background operation (``:ops`` reopens the same
view with :meth:`ConfirmScreen.reattach`). Nothing here talks to the cluster: the app runs
the dry run and the apply in workers and posts the answers here.

:class:`ParamPrompt` (in :mod:`gputui.ui.screens.param_prompt`, re-exported here) asks one
:class:`~gputui.actions.base.ParamSpec` value before anything is planned.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual import on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Static

from gputui.actions.base import Cancel, Plan, Result, Risk
from gputui.actions.operations import Operation
from gputui.actions.runner import DryRun
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import (
    ActionCompleted,
    ActionProgressed,
    ActionRequested,
    ApplyRequested,
    DryRunFinished,
    DryRunProgressed,
)
from gputui.ui.render.plan import (
    POD_LIST_LIMIT,
    dialog_title,
    plan_text,
    section,
    status_text,
    targets_label,
)
from gputui.ui.screens.param_prompt import ParamPrompt
from gputui.ui.selection import Selection

__all__ = ["ActionCompleted", "ActionProgressed", "ApplyRequested", "ConfirmScreen",
           "DryRunFinished", "DryRunProgressed", "ParamPrompt", "plan_text"]

#: the action ``u`` offers after a drain left nodes cordoned (gputui.actions.node.UNCORDON)
UNCORDON_ID = "uncordon"


class ConfirmScreen(ModalScreen[bool | None]):
    """Shows a plan, its dry run, then its progress.

    Dismisses True when applied, False when cancelled or failed, None when the server
    answered 409 (an object changed since the plan): the app then re-plans and asks again;
    also None, with :attr:`options_requested`, when the operator asked for other options;
    True, with :attr:`backgrounded`, when ``b`` left the action running in the background.
    ``action`` is the action that made the plan (handed back with the confirmation).
    """

    DEFAULT_CLASSES = "confirm-screen"
    BINDINGS = bindings_for("confirm")

    def __init__(self, plan: Plan, action: Any = None,
                 targets: Sequence[str] | None = None) -> None:
        """``targets``: the nodes the action was started on (the view's selection; the
        plan's own targets when not given); the title names them."""
        super().__init__()
        self.plan = plan
        self.action = action
        #: the nodes this action was asked to act on (the view's selection)
        self.targets: tuple[str, ...] = plan.targets if targets is None else tuple(targets)
        self.dry_run: DryRun | None = None
        self.cancel = Cancel()
        self.applying = False
        self.result: Result | None = None
        #: the operator pressed ``o``: the app asks the values again and re-plans
        self.options_requested = False
        #: set when the dialog goes: a dry run still asking sends no more requests
        self.dry_run_stop = threading.Event()
        #: the operation this dialog shows (set once applied, or when reattached)
        self.operation_id: str | None = None
        #: ``b`` closed the dialog: the operation runs on in the background
        self.backgrounded = False

    @classmethod
    def reattach(cls, op: Operation) -> ConfirmScreen:
        """The progress view of an operation already applied (``enter`` in ``:ops``): the
        same dialog, its plan and dry run, showing the live progress; ``esc`` stops it,
        ``b`` closes it again."""
        dialog = cls(op.plan, op.action)
        dialog.dry_run, dialog.cancel = op.dry_run, op.cancel
        dialog.applying, dialog.operation_id = True, op.id
        dialog.result = op.result
        return dialog

    def compose(self) -> Iterable[Widget]:
        plan = self.plan
        with Vertical(id="confirm-dialog"):
            yield Static(Text(dialog_title(plan, self.targets), style="bold"),
                         id="confirm-title")
            with VerticalScroll(id="confirm-body"):
                yield Static(plan_text(plan), id="confirm-plan")
                yield Static(self._dry_run_text(), id="confirm-dry-run")
            # outside the scrolled plan: always on screen, even at 80x24
            yield Static("", id="confirm-progress", classes="hidden")
            yield Static(self._status_text(), id="confirm-status")
            if plan.risk is Risk.CLUSTER_WIDE and plan.confirm_text and not plan.blocked:
                yield Input(placeholder=f"type {plan.confirm_text} to confirm",
                            id="confirm-typed")
            with Horizontal(id="confirm-buttons"):
                yield Button("Confirm (y)", id="confirm-yes", variant="error"
                             if plan.risk is not Risk.SAFE else "primary", disabled=True)
                yield Button("Cancel (n)", id="confirm-no")
                yield Button("Background (b)", id="confirm-background", classes="hidden")
                yield Button("Uncordon (u)", id="confirm-uncordon", classes="hidden")

    def on_mount(self) -> None:
        if self.applying:  # reattached to a running (or finished) operation
            self._show_applying()
            if self.result is not None:
                self.show_ended(self.result)
            return
        if self.plan.risk is Risk.CLUSTER_WIDE and not self.plan.blocked and \
                self.plan.confirm_text:
            self.query_one("#confirm-typed", Input).focus()
        else:  # a safe plan's Confirm gets focus once the dry run has enabled it
            self.query_one("#confirm-no", Button).focus()

    # ------------------------------------------------------------------ state
    @property
    def ready(self) -> bool:
        """Confirmable now: not blocked, dry run passed, typed text matches."""
        if self.plan.blocked or self.dry_run is None or not self.dry_run.ok or self.applying:
            return False
        if self.plan.risk is Risk.CLUSTER_WIDE and self.plan.confirm_text:
            return self.query_one("#confirm-typed", Input).value == self.plan.confirm_text
        return True

    def _dry_run_text(self) -> Text:
        """The dry run's details, in the scrolled plan."""
        if self.plan.blocked or self.dry_run is None:
            return Text("")
        return section("Dry run (dryRun=All)", self.dry_run.lines, limit=POD_LIST_LIMIT)

    def _status_text(self) -> Text:
        """One line above the buttons (:func:`~gputui.ui.render.plan.status_text`)."""
        return status_text(self.plan, self.dry_run, self._options_hint())

    def _options_hint(self) -> str:
        """``; o: other options`` when the action asks for values the operator may change."""
        params = self.action.params if self.action is not None else ()
        return "; o: other options" if params and not self.applying else ""

    def _refresh_buttons(self) -> None:
        self.query_one("#confirm-yes", Button).disabled = not self.ready

    def on_unmount(self) -> None:
        self.dry_run_stop.set()

    def on_dry_run_progressed(self, message: DryRunProgressed) -> None:
        if self.dry_run is None and not self.plan.blocked:
            self.query_one("#confirm-status", Static).update(Text(
                f"Dry run: asking the server (dryRun=All)... {message.done} of "
                f"{message.total} writes checked", style="italic"))

    def on_dry_run_finished(self, message: DryRunFinished) -> None:
        if message.dry_run.conflict:
            self.dismiss(None)  # stale plan: the app re-plans from the latest state
            return
        self.dry_run = message.dry_run
        self.query_one("#confirm-dry-run", Static).update(self._dry_run_text())
        self.query_one("#confirm-status", Static).update(self._status_text())
        self._refresh_buttons()
        if self.ready and self.plan.risk is Risk.SAFE:
            self.query_one("#confirm-yes", Button).focus()

    @on(Input.Changed, "#confirm-typed")
    def _typed(self) -> None:
        self._refresh_buttons()

    @on(Input.Submitted, "#confirm-typed")
    def _typed_enter(self) -> None:
        self.action_confirm()

    # ------------------------------------------------------------------ keys
    def action_confirm(self) -> None:
        """``y``: apply, if the plan may be applied now; otherwise say why not (also once
        it runs: ``y`` is no longer offered, and a press says what the keys do now)."""
        if not self.ready:
            self.notify(self._not_ready_reason(), severity="warning")
            return
        self.applying = True
        self._show_applying()
        self.post_message(ApplyRequested(self.plan, self.dry_run or DryRun(), self.cancel,
                                         self, self.action))

    def _show_applying(self) -> None:
        """The progress panel, ``Stop (esc)`` and ``Background (b)`` on the key line; no
        Confirm button any more (it would be a dead one: ``y`` has nothing left to do),
        the status line says what runs instead."""
        self._refresh_buttons()
        self.query_one("#confirm-yes", Button).add_class("hidden")
        self.query_one("#confirm-status", Static).update(Text.assemble(
            ("Running: ", "bold"), "esc stops it, b keeps it running in the background"))
        self.refresh_bindings()
        progress = self.query_one("#confirm-progress", Static)
        progress.remove_class("hidden")
        progress.update(Text("Applying...", style="bold"))
        self.query_one("#confirm-no", Button).label = "Stop (esc)"
        background = self.query_one("#confirm-background", Button)
        background.remove_class("hidden")
        for typed in self.query("#confirm-typed"):  # typed once: b must reach the dialog
            typed.disabled = True
        background.focus()  # enter there keeps it running, never stops it

    def show_ended(self, result: Result) -> None:
        """An ended operation (reattached, or one that left nodes cordoned): its result,
        how it ended on the status line; ``esc`` closes, ``u`` uncordons what it left."""
        self.result = result
        text = Text(result.summary, style="bold")
        if result.error:
            text.append(f"\n  {result.error}")
        self.query_one("#confirm-progress", Static).update(text)
        state = "Done" if result.ok else "Stopped" if result.cancelled else "Failed"
        status = Text.assemble((f"{state}: ", "bold"), "esc closes")
        if result.cordoned and not result.ok:
            status.append(f"; {targets_label(result.cordoned)} "
                          f"{'stays' if len(result.cordoned) == 1 else 'stay'} cordoned: "
                          "u uncordons")
            uncordon = self.query_one("#confirm-uncordon", Button)
            uncordon.remove_class("hidden")
            uncordon.focus()
        self.query_one("#confirm-status", Static).update(status)
        self.query_one("#confirm-no", Button).label = "Close (esc)"
        self.query_one("#confirm-background", Button).add_class("hidden")
        self.refresh_bindings()

    def action_background(self) -> None:
        """``b``: while the action runs, close the dialog and leave it running (``:ops``)."""
        if not self.applying:
            self.notify("nothing runs yet: b keeps a running action in the background",
                        severity="warning")
            return
        if self.result is not None:  # already ended: nothing left to keep running
            self.dismiss(self.result.ok)
            return
        self.backgrounded = True
        self.dismiss(True)

    def _not_ready_reason(self) -> str:
        if self.applying and self.result is not None:
            return "it has ended: esc closes"
        if self.applying:
            return "already confirmed and running: esc stops it, b keeps it in the background"
        if self.plan.blocked:
            return f"not possible: {self.plan.blocked}"
        if self.dry_run is None:
            return "waiting for the server's dry run"
        if self.dry_run.nothing:
            return "nothing to change: the plan sends no write"
        if self.dry_run.refusal:
            return "the server refused the dry run: nothing can be applied"
        if not self.dry_run.ok:
            return f"the dry run is incomplete: {self.dry_run.summary()}"
        return f"type {self.plan.confirm_text} to confirm"

    def action_options(self) -> None:
        """``o``: ask the action's values again (the drain's options) and re-plan; nothing
        was sent. Not while applying, and not for an action that asks for nothing."""
        if self.applying:
            return
        if not (self.action is not None and self.action.params):
            self.notify("this action has no options to change", severity="warning")
            return
        self.options_requested = True
        self.dismiss(None)

    def action_cancel(self) -> None:
        """``n``/``esc``: close; while applying, stop further steps (the result follows)."""
        if self.applying and self.result is not None:  # a reattached, ended operation
            self.dismiss(self.result.ok)
            return
        if self.applying:
            self.cancel.stop("esc")
            self.query_one("#confirm-progress", Static).update(
                Text("Stopping: no further evictions or steps...", style="bold"))
            return
        self.dismiss(False)

    async def action_quit(self) -> None:
        """``ctrl+q``: the dialog is modal (the app's keys do not reach it), so it quits
        from here; the app stops the running action first."""
        await self.app.run_action("quit")

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.action_confirm()

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#confirm-background")
    def _background(self) -> None:
        self.action_background()

    @on(Button.Pressed, "#confirm-uncordon")
    def _uncordon(self) -> None:
        self.action_uncordon()

    # ------------------------------------------------------------------ progress
    def on_action_progressed(self, message: ActionProgressed) -> None:
        progress = message.progress
        text = Text(progress.message, style="bold")
        if progress.total:
            text.append(f"  ({progress.done} of {progress.total} done)")
        for line in progress.lines():
            text.append("\n  ")
            text.append(line)
        self.query_one("#confirm-progress", Static).update(text)

    def on_action_completed(self, message: ActionCompleted) -> None:
        """The end: the dialog closes (the notification says how it ended), except when
        the action left nodes cordoned without finishing (a stopped drain): then it stays,
        says so and offers ``u``."""
        self.result = message.result
        if message.result.cordoned and not message.result.ok and self.applying:
            self.show_ended(message.result)
            return
        self.dismiss(None if message.result.conflict else message.result.ok)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows what the keys do now: no ``y`` once the action runs, ``u``
        only when an ended action left nodes cordoned."""
        if action == "confirm":
            return not self.applying
        if action == "uncordon":
            return self._left_cordoned() != ()
        return True

    def why_not(self, action: str) -> str | None:
        """What ``y`` or ``u`` answers when the footer does not offer it."""
        if action == "confirm":
            return self._not_ready_reason()
        if action == "uncordon":
            return "u uncordons what a stopped or failed drain left cordoned; nothing is " \
                   "left cordoned here"
        return None

    def _left_cordoned(self) -> tuple[str, ...]:
        result = self.result
        return result.cordoned if result is not None and not result.ok else ()

    def action_uncordon(self) -> None:
        """``u`` after a drain that stopped or failed: uncordon the nodes it left
        cordoned, as a new action (plan, dry run, ``y``); this dialog closes."""
        nodes = self._left_cordoned()
        if not nodes:
            self.notify(self.why_not("uncordon") or "", severity="warning")
            return
        self.dismiss(False)
        self.app.post_message(ActionRequested(UNCORDON_ID, nodes))

    def selected_nodes(self) -> Selection:
        """The nodes this dialog acts on: what an ended action left cordoned, else the
        targets it was started on."""
        return Selection(self._left_cordoned() or self.targets)
