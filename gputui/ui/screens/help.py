"""``HelpScreen`` (``?``, ``:help``): every key and command, generated from the registry.

Nothing here is typed by hand: every binding in the app, the detail panes' and dialogs'
included, is a command of :mod:`gputui.ui.commands` (with the user's remaps applied), and
the actions come from the action registry through it, greyed with the reason when they
cannot run (read-only mode, denied by RBAC). Help can never drift from what the keys do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from gputui.ui.commands import COMMANDS, bindings_for, key_table


def help_rows(keymap: Mapping[str, str],
              blocked: Mapping[str, str] | None = None) -> list[tuple[str, str, str, str]]:
    """(section, keys, title, tooltip) of every command; greyed actions say why."""
    return key_table(keymap, blocked)


def help_table(rows: list[tuple[str, str, str, str]]) -> Table:
    """The help as one Rich table, grouped by where the keys work."""
    table = Table(box=None, show_header=True, header_style="bold", expand=True, pad_edge=False)
    # capped, so at 80 columns the sentence that explains a key keeps most of the width
    table.add_column("KEYS", style="bold", max_width=16)
    table.add_column("COMMAND", max_width=22)
    table.add_column("WHAT IT DOES", ratio=1)
    section = ""
    for scope, keys, title, tooltip in rows:
        if scope != section:
            section = scope
            table.add_row(Text(scope, style="bold underline"), "", "")
        table.add_row(keys or "-", title, tooltip)
    table.add_row(Text(": commands", style="bold underline"), "", "")
    for cmd in COMMANDS:
        if cmd.aliases:
            table.add_row(" ".join(f":{a}" for a in cmd.aliases[:3]), cmd.title, "")
    return table


class HelpScreen(ModalScreen[None]):
    """Keys and commands; ``esc``, ``q`` or ``?`` closes it."""

    DEFAULT_CLASSES = "help-screen"
    BINDINGS = bindings_for("help")

    def __init__(self, keymap: Mapping[str, str] | None = None,
                 blocked: Mapping[str, str] | None = None) -> None:
        """``keymap``: the user's remaps; ``blocked``: action id -> why it is greyed."""
        super().__init__()
        self.rows: list[tuple[str, str, str, str]] = help_rows(keymap or {}, blocked or {})

    def compose(self) -> Iterable[Widget]:
        with VerticalScroll(id="help-body"):
            yield Static("gputui keys — everything here is also in the palette (ctrl+p)",
                         id="help-title")
            yield Static(help_table(self.rows), id="help-table")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_dismiss_help(self) -> None:
        self.dismiss()
