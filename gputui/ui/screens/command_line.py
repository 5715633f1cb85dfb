"""``CommandLine``: the k9s ``:`` prompt (``:nodes``, ``:upgrades``, ``:mig``, ``:q`` ...).

A modal with one input docked at the bottom. As it is typed, Textual's suggester greys in
the first registry alias that starts with the text; Tab (like the right arrow, Textual's own
key for it) takes that suggestion: Textual's ``Input`` has no Tab completion of its own, so
the prompt binds Tab to its ``complete`` action. It returns the typed text; the app resolves
it through the registry, so the prompt knows no command itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import on
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Input

from gputui.ui.commands import COMMANDS, bindings_for


class CommandLine(ModalScreen[str | None]):
    """The ``:`` prompt; dismisses with the text, or None on ``esc``."""

    DEFAULT_CLASSES = "command-line-screen"
    BINDINGS = bindings_for("command_line")

    def compose(self) -> Iterable[Widget]:
        names = sorted({alias for cmd in COMMANDS for alias in cmd.aliases})
        yield Input(placeholder="nodes upgrades mig findings help q   (tab completes)",
                    suggester=SuggestFromList(names, case_sensitive=False),
                    id="command-input")

    def on_mount(self) -> None:
        self.query_one("#command-input", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip().lstrip(":"))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_complete(self) -> None:
        """Tab: take the suggestion shown, as ``right`` at the end of the text does
        (``Input.action_cursor_right`` accepts it there); nothing shown, nothing changes."""
        field = self.query_one("#command-input", Input)
        field.action_end()
        field.action_cursor_right()
