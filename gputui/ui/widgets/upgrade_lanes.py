"""``UpgradeLanes``: nodes grouped by upgrade state, patched by key as snapshots arrive.

A table grouped by state works at 80x24 (lanes stack vertically) and at 160x48 (the reason
column widens). Rows are keyed by node name and lane headings by ``lane:<state>``; each
snapshot adds, updates and removes rows, then re-sorts by lane, so a node that moves lane
keeps its row key and the cursor follows it instead of staying on a row index.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from gputui.domain.model import UpgradeView
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import JumpRequested
from gputui.ui.render.style import BOLD, Palette
from gputui.ui.render.upgrades import LaneRow, lane_role, lane_rows
from gputui.ui.widgets.palette_mixin import widget_palette

#: column key -> heading; the reason column takes what is left of the width
COLUMNS = (("node", "node"), ("for", "for"), ("why", "why it waits"))


class UpgradeLanes(DataTable[Text]):
    """Upgrade lanes in state-machine order, one row per node."""

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("upgrades")

    class NodeHighlighted(Message):
        """The cursor moved onto ``node`` (None on a lane heading)."""

        def __init__(self, node: str | None) -> None:
            super().__init__()
            self.node = node

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._rows: dict[str, LaneRow] = {}
        self._reason_width = 40
        self._width_changed = False

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    # --- patching ------------------------------------------------------------------------

    def _cells(self, row: LaneRow, palette: Palette) -> tuple[Text, Text, Text]:
        if row.node is None:
            heading = palette.role(lane_role(row.lane)) + BOLD
            return Text(f"▾ {row.label}", style=heading), Text(""), Text("")
        reason = row.reason
        if len(reason) > self._reason_width:
            reason = reason[: self._reason_width - 1] + "…"
        style = palette.role("crit") if row.lane == "upgrade-failed" else Style()
        return Text(f"  {row.label}", style=style), Text(row.since), Text(reason)

    def show_view(self, view: UpgradeView, now: float) -> None:
        """Patch rows to ``view``; the cursor stays on the node (or heading) it was on."""
        current = self.current_key
        palette = widget_palette(self)
        wanted = {row.key: row for row in lane_rows(view, now)}
        for key in [k for k in self._rows if k not in wanted]:
            self.remove_row(key)
            del self._rows[key]
        for key, row in wanted.items():
            cells = self._cells(row, palette)
            if key not in self._rows:
                self.add_row(*cells, key=key)
            elif self._rows[key] != row or self._width_changed:
                for (column, _), cell in zip(COLUMNS, cells):
                    self.update_cell(key, column, cell, update_width=True)
            self._rows[key] = row
        order = {key: row.order for key, row in wanted.items()}
        self.sort("node", key=lambda cell: order.get(_key_of(cell, wanted), (99, 0, "")))
        self._width_changed = False
        self.restore_cursor(current)

    def restore_cursor(self, key: str | None) -> None:
        """Put the cursor back on ``key`` after a sort (or on the first node)."""
        if not self.row_count:
            return
        target = key if key in self._rows else next(
            (k for k, r in self._rows.items() if r.node), None)
        if target is None:
            return
        index = self.get_row_index(target)
        if index != self.cursor_row:
            self.move_cursor(row=index, animate=False)

    def set_reason_width(self, width: int) -> None:
        """Fit the reason column to the widget: the table never scrolls sideways."""
        width = max(20, width)
        self._width_changed = self._width_changed or width != self._reason_width
        self._reason_width = width

    def select_node(self, node: str | None) -> None:
        """Put the cursor on ``node`` (a jump from elsewhere)."""
        if node and node in self._rows:
            self.move_cursor(row=self.get_row_index(node), animate=False)

    # --- cursor and keys -------------------------------------------------------------------

    @property
    def current_key(self) -> str | None:
        """Key of the row under the cursor (a node name or ``lane:<state>``)."""
        if not self.row_count:
            return None
        try:
            key: RowKey = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:  # noqa: BLE001 - cursor outside the table after a removal
            return None
        return key.value

    @property
    def current_node(self) -> str | None:
        """The node under the cursor, None on a lane heading."""
        key = self.current_key
        row = self._rows.get(key) if key else None
        return row.node if row else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.post_message(self.NodeHighlighted(self.current_node))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: jump to the node's pipeline (nothing on a lane heading)."""
        event.stop()
        node = self.current_node
        if node:
            self.post_message(JumpRequested(node, "pipeline"))


def _key_of(cell: Text, rows: dict[str, LaneRow]) -> str:
    """Map a node cell back to its row key: node rows show the name, headings the label."""
    plain = cell.plain.strip()
    if plain.startswith("▾ "):
        label = plain[2:]
        return next((k for k, r in rows.items() if r.node is None and r.label == label), "")
    return plain
