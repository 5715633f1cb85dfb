"""``OperationsScreen`` (``:ops``): this session's operations, running and finished.

Newest first: state, start time, title and what it does now (or how it ended); below the
table the selected operation in full (its id, targets, the pods its plan evicts, the live
lines). ``enter`` asks the app to reopen its progress dialog, ``x`` to stop it (the app asks
first). The screen renders what the app hands it (:meth:`show_operations`) and posts
intents; it never touches the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import CellDoesNotExist, RowKey

from gputui.actions.operations import Operation
from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import OperationOpenRequested, OperationStopRequested
from gputui.ui.render.operations import detail_text, row_cells
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.palette_mixin import widget_palette

#: (column key, header) of the operations table
COLUMNS = (("state", "STATE"), ("started", "STARTED"), ("title", "OPERATION"),
           ("now", "NOW"))
EMPTY = "No operations yet in this session: an action confirmed with y shows here."


class OperationsScreen(GpuScreen):
    """The ``:ops`` view."""

    VIEW = "ops"
    DEFAULT_CLASSES = "ops-screen"
    BINDINGS = bindings_for("ops")

    def __init__(self) -> None:
        super().__init__()
        self.operations: tuple[Operation, ...] = ()

    def compose_body(self) -> Iterable[Widget]:
        yield Static(EMPTY, id="ops-empty")
        table: DataTable[Text] = DataTable(id="ops-table", cursor_type="row",
                                           zebra_stripes=False)
        yield table
        yield Static(id="ops-detail")

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.table.add_column(label, key=key)
        self.table.focus()
        self._patch_rows()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#ops-table", DataTable)

    @property
    def selected(self) -> Operation | None:
        """The operation under the cursor."""
        if not self.table.row_count:
            return None
        try:
            key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key
        except CellDoesNotExist:
            return None
        return next((op for op in self.operations if op.id == key.value), None)

    # --- the contract -------------------------------------------------------------------

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Nothing: operations come from the registry (:meth:`show_operations`)."""

    def show_node(self, node_name: str | None) -> None:
        """Nothing: the view lists operations, not nodes."""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the view shows no metrics."""

    def selected_nodes(self) -> Selection:
        """The nodes of the selected operation (its detail names them): ``u`` after a
        stopped drain uncordons what the drain left cordoned."""
        op = self.selected if self.is_mounted else None
        if op is None:
            return Selection(why_none="no operation is selected")
        return Selection.of(op.plan.targets, f"the selected operation ({op.title}) is "
                            "about the cluster, not a node")

    def show_operations(self, operations: Sequence[Operation]) -> None:
        """The session's operations, newest first (the app calls this on every change)."""
        self.operations = tuple(operations)
        if self.is_mounted:
            self._patch_rows()

    def _patch_rows(self) -> None:
        """Patch the rows by operation id; when operations came or went, lay the rows out
        again newest first (a session holds a few hundred at most). The cursor stays on its
        operation."""
        table, palette = self.table, widget_palette(self)
        selected = self.selected
        ids = [op.id for op in self.operations]
        if [str(row.key.value) for row in table.ordered_rows] == ids:
            for op in self.operations:
                for (key, _), cell in zip(COLUMNS, row_cells(op, palette), strict=True):
                    table.update_cell(op.id, key, cell, update_width=True)
        else:
            table.clear()
            for op in self.operations:
                table.add_row(*row_cells(op, palette), key=op.id)
            if selected is not None and selected.id in ids:
                table.move_cursor(row=table.get_row_index(RowKey(selected.id)),
                                  animate=False)
        self.query_one("#ops-empty", Static).display = not self.operations
        self._show_detail()

    def _show_detail(self) -> None:
        op = self.selected
        text = detail_text(op, widget_palette(self)) if op is not None else Text("")
        self.query_one("#ops-detail", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    # --- keys ---------------------------------------------------------------------------

    def action_open_operation(self) -> None:
        """``enter``: the selected operation's live progress (the dialog, reattached)."""
        op = self.selected
        if op is None:  # a key that does nothing says why
            self.notify("no operation is selected", severity="warning")
            return
        self.post_message(OperationOpenRequested(op.id))

    def action_stop_operation(self) -> None:
        """``x``: stop the selected running operation (the app asks first)."""
        op = self.selected
        if op is None:
            self.notify("no operation is selected", severity="warning")
            return
        if not op.running:
            self.notify(f"{op.title} is not running ({op.state.value})", severity="warning")
            return
        self.post_message(OperationStopRequested(op.id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """``enter`` on the table (the DataTable's own binding) opens it too."""
        event.stop()
        self.action_open_operation()
