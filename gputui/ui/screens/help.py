"""``HelpScreen`` (``?``, ``:help``): every key and command, generated from the registry.

Nothing here is typed by hand: every binding in the app, the detail panes' and dialogs'
included, is a command of :mod:`gputui.ui.commands` (with the user's remaps applied), and
the actions come from the action registry through it, greyed with the reason when they
cannot run (read-only mode, denied by RBAC). Help can never drift from what the keys do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from gputui.ui.commands import COMMANDS, bindings_for
from gputui.ui.key_table import key_table


def help_rows(keymap: Mapping[str, str], blocked: Mapping[str, str] | None = None,
              view: str | None = None) -> list[tuple[str, str, str, str]]:
    """(section, keys, title, tooltip) of every command, ``view``'s first (so that at 80x24
    the keys of the view help was opened from show without scrolling: cordon, uncordon and
    drain on the node list); greyed actions say why."""
    return key_table(keymap, blocked, view)


def _section(heading: str, header: bool) -> Table:
    """One section's table; every section has the same column widths, so they line up."""
    table = Table(box=None, show_header=header, header_style="bold", expand=True,
                  pad_edge=False, title=Text(heading, style="bold underline"),
                  title_justify="left")
    # fixed and narrow, so at 80 columns the sentence that explains a key keeps most of the
    # width (and the node list's cordon, uncordon and drain fit above the fold at 80x24)
    table.add_column("KEYS", style="bold", width=12)
    table.add_column("COMMAND", width=16)
    table.add_column("WHAT IT DOES", ratio=1)
    return table


def help_table(rows: list[tuple[str, str, str, str]]) -> Group:
    """The help as one table per section (the heading above it, where the keys work)."""
    tables: list[Table] = []
    section = ""
    for scope, keys, title, tooltip in rows:
        if not tables or scope != section:
            section = scope
            tables.append(_section(scope, header=not tables))
        tables[-1].add_row(keys or "-", title, tooltip)
    commands = _section(": commands", header=not tables)
    for cmd in COMMANDS:
        if cmd.aliases:
            commands.add_row(" ".join(f":{a}" for a in cmd.aliases[:3]), cmd.title, "")
    return Group(*tables, commands)


class HelpScreen(ModalScreen[None]):
    """Keys and commands; ``esc``, ``q`` or ``?`` closes it."""

    DEFAULT_CLASSES = "help-screen"
    BINDINGS = bindings_for("help")

    def __init__(self, keymap: Mapping[str, str] | None = None,
                 blocked: Mapping[str, str] | None = None, view: str | None = None) -> None:
        """``keymap``: the user's remaps; ``blocked``: action id -> why it is greyed;
        ``view``: the view help was opened from (its keys come first)."""
        super().__init__()
        self.rows: list[tuple[str, str, str, str]] = help_rows(keymap or {}, blocked or {},
                                                               view)

    def compose(self) -> Iterable[Widget]:
        with VerticalScroll(id="help-body"):
            yield Static("This view's keys first; everything else by name: type : or press ctrl+p",
                         id="help-title")
            yield Static(help_table(self.rows), id="help-table")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_dismiss_help(self) -> None:
        self.dismiss()
