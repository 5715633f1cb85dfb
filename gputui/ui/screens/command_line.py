"""``CommandLine``: the k9s ``:`` prompt (``:nodes``, ``:upgrades``, ``:mig``, ``:q`` ...).

A modal with one input docked at the bottom. As it is typed, Textual's suggester greys in
the first registry alias that starts with the text; Tab (like the right arrow, Textual's own
key for it) takes that suggestion: Textual's ``Input`` has no Tab completion of its own, so
the prompt binds Tab to its ``complete`` action. After ``ctx `` it completes the kubeconfig's
context names the app hands it. It returns the typed text; the app resolves it through the
registry, so the prompt knows no command itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual import on
from textual.screen import ModalScreen
from textual.suggester import Suggester, SuggestFromList
from textual.widget import Widget
from textual.widgets import Input

from gputui.ui.commands import COMMANDS, bindings_for

#: the ``:`` words whose argument is a context name
CONTEXT_WORDS = tuple(next(cmd for cmd in COMMANDS if cmd.id == "view_ctx").aliases)


class CommandSuggester(Suggester):
    """Command names, and after ``ctx `` the context names (as the kubeconfig spells them:
    context names are case-sensitive, command names are not)."""

    def __init__(self, contexts: Sequence[str] = ()) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        names = sorted({alias for cmd in COMMANDS for alias in cmd.aliases})
        self.commands = SuggestFromList(names, case_sensitive=False)
        self.contexts = tuple(contexts)

    async def get_suggestion(self, value: str) -> str | None:
        word, space, rest = value.partition(" ")
        if space and word.lower() in CONTEXT_WORDS:
            found = next((name for name in self.contexts if name.startswith(rest)), None)
            return f"{word} {found}" if found is not None and rest != found else None
        return await self.commands.get_suggestion(value.casefold())


class CommandLine(ModalScreen[str | None]):
    """The ``:`` prompt; dismisses with the text, or None on ``esc``."""

    DEFAULT_CLASSES = "command-line-screen"
    BINDINGS = bindings_for("command_line")

    def __init__(self, contexts: Sequence[str] = ()) -> None:
        super().__init__()
        #: context names ``:ctx NAME`` completes
        self.contexts = tuple(contexts)

    def compose(self) -> Iterable[Widget]:
        yield Input(placeholder="nodes upgrades mig findings ctx help q   (tab completes)",
                    suggester=CommandSuggester(self.contexts), id="command-input")

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
