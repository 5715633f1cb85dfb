"""``AskScreen``: one yes/no question before something that cannot be taken back.

Used where a key would stop work already under way: ``x`` on a running operation in
``:ops``, and quitting while operations run. ``y`` answers yes; ``n`` and ``esc`` no (the
safe answer is the default: focus starts on "No").
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from gputui.ui.commands import bindings_for


class AskScreen(ModalScreen[bool]):
    """Dismisses True for yes, False for no."""

    DEFAULT_CLASSES = "confirm-screen ask-screen"  # styled in confirm.tcss
    BINDINGS = bindings_for("ask")

    def __init__(self, question: str, detail: str, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> Iterable[Widget]:
        with Vertical(id="ask-dialog"):
            yield Static(Text(self.question, style="bold"), id="ask-question")
            yield Static(self.detail, id="ask-detail", markup=False)
            with Horizontal(id="ask-buttons"):
                yield Button(f"{self.yes_label} (y)", id="ask-yes", variant="error")
                yield Button(f"{self.no_label} (n)", id="ask-no")

    def on_mount(self) -> None:
        self.query_one("#ask-no", Button).focus()

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#ask-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#ask-no")
    def _no(self) -> None:
        self.dismiss(False)
