"""``HelpScreen`` (``?``, ``:help``): every key and command, generated from the registry.

Nothing here is typed by hand: the global and per-view commands come from
:mod:`gputui.ui.commands` (with the user's remaps applied), and the keys of the detail panes
come from those widgets' own ``BINDINGS``, so help can never drift from what the keys do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from gputui.ui.commands import COMMANDS, key_label, key_table
from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.metrics_pane import MetricsPane
from gputui.ui.widgets.node_detail import NodeDetail
from gputui.ui.widgets.pipeline import PipelinePane
from gputui.ui.widgets.upgrade_lanes import UpgradeLanes

#: (title, class) of widgets/screens whose own bindings help also lists
PANE_BINDINGS: tuple[tuple[str, type[object]], ...] = (
    ("Pipeline pane", PipelinePane),
    ("Describe pane", NodeDetail),
    ("Metrics pane", MetricsPane),
    ("Upgrades", UpgradesScreen),
    ("Upgrade lanes", UpgradeLanes),
    ("MIG", MigScreen),
    ("Pod log", PodLogScreen),
)


def pane_rows(keymap: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """(section, keys, title, tooltip) of the detail widgets' own bindings that exist."""
    rows = []
    for section, cls in PANE_BINDINGS:
        for binding in getattr(cls, "BINDINGS", ()):
            if isinstance(binding, Binding) and binding.description:
                keys = keymap.get(binding.id or "", binding.key)
                rows.append((section, key_label(keys), binding.description,
                             binding.tooltip or ""))
    return rows


def help_rows(keymap: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """(section, keys, title, tooltip): the registry's commands, then the panes' own keys."""
    return key_table(keymap) + pane_rows(keymap)


def help_table(rows: list[tuple[str, str, str, str]]) -> Table:
    """The help as one Rich table, grouped by where the keys work."""
    table = Table(box=None, show_header=True, header_style="bold", expand=True, pad_edge=False)
    table.add_column("KEYS", no_wrap=True, style="bold")
    table.add_column("COMMAND", no_wrap=True)
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
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close", show=True,  # noqa: RUF012
                        id="help.close", tooltip="Close help")]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, str, str]] = []

    def compose(self) -> Iterable[Widget]:
        self.rows = help_rows(getattr(self.app, "keymap", {}))
        with VerticalScroll(id="help-body"):
            yield Static("gputui keys — everything here is also in the palette (ctrl+p)",
                         id="help-title")
            yield Static(help_table(self.rows), id="help-table")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_dismiss_help(self) -> None:
        self.dismiss()
