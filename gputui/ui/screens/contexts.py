"""``ContextsScreen`` (``:ctx``): the kubeconfig's contexts; ``enter`` shows that cluster.

On-call engineers carry one kubeconfig with many clusters (k9s users switch with ``:ctx``).
The list is handed over when the screen is opened (:func:`gputui.sources.contexts.
list_contexts`, every shown field already cleaned): the current context is marked ``●``,
read-only ones (``read_only_contexts`` or ``--read-only``) say so in the warning colour, and
``enter`` asks the app to switch (:class:`~gputui.ui.contracts.ContextSwitchRequested`); the
screen itself opens nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import CellDoesNotExist

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.sources.contexts import ContextEntry
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import ContextSwitchRequested
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.palette_mixin import widget_palette

COLUMNS = (("current", " "), ("name", "CONTEXT"), ("mode", "MODE"), ("user", "USER"),
           ("server", "SERVER"))


class ContextsScreen(GpuScreen):
    """The contexts of the kubeconfig; ``enter`` switches to the highlighted one."""

    VIEW = "contexts"
    DEFAULT_CLASSES = "contexts-screen"
    BINDINGS = bindings_for("contexts")
    DEFAULT_CSS = """
    .contexts-screen #contexts-table { height: 1fr; }
    .contexts-screen #contexts-hint { height: auto; color: $gpu-muted; padding: 0 1; }
    """

    def __init__(self, entries: Sequence[ContextEntry]) -> None:
        super().__init__()
        self.entries = tuple(entries)

    def compose_body(self) -> Iterable[Widget]:
        yield DataTable(id="contexts-table", cursor_type="row", zebra_stripes=False)
        yield Static(self._hint(), id="contexts-hint")

    def _hint(self) -> str:
        if not self.entries:
            return "No contexts in the kubeconfig (in-cluster, or an empty file)."
        return (f"{len(self.entries)} contexts   enter: switch (actions already running "
                "keep running)   esc: back")

    def on_mount(self) -> None:
        table = self.table
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        palette = widget_palette(self)
        for entry in self.entries:
            mode = Text("read-only", style=palette.role("warn")) \
                if entry.read_only else Text("")
            table.add_row(Text("●" if entry.current else " ", style="bold"),
                          Text(entry.name, style="bold" if entry.current else ""), mode,
                          Text(entry.user), Text(entry.server, no_wrap=True),
                          key=entry.key)
        current = next((i for i, e in enumerate(self.entries) if e.current), 0)
        if self.entries:
            table.move_cursor(row=current)
        table.focus()

    @property
    def table(self) -> DataTable[Text]:
        """The contexts table."""
        return self.query_one("#contexts-table", DataTable)

    @property
    def selected(self) -> ContextEntry | None:
        """The entry under the cursor."""
        try:
            key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key
        except CellDoesNotExist:
            return None
        return next((e for e in self.entries if e.key == key.value), None)

    # --- the contract -------------------------------------------------------------------

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Nothing: the list is the kubeconfig's, not the cluster's (the header is kept
        current by the app)."""

    def show_node(self, node_name: str | None) -> None:
        """Nothing: contexts have no node."""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: contexts have no metrics."""

    def selected_nodes(self) -> Selection:
        """None: the list selects a context, not a node."""
        return Selection(why_none="the contexts list selects a cluster, not a node")

    # --- keys ---------------------------------------------------------------------------

    def action_switch(self) -> None:
        """``enter``: ask the app to show the highlighted context's cluster."""
        entry = self.selected
        if entry is not None:
            self.post_message(ContextSwitchRequested(entry.key))

    @on(DataTable.RowSelected, "#contexts-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_switch()
