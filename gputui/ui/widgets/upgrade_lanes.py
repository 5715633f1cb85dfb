"""``UpgradeLanes``: nodes grouped by upgrade state, patched by key as snapshots arrive.

A table grouped by state works at 80x24 (lanes stack vertically) and at 160x48 (the reason
column widens). Rows are keyed by node name and lane headings by ``lane:<state>``; each
snapshot adds, updates and removes rows, then re-sorts by lane, so a node that moves lane
keeps its row key and the cursor follows it instead of staying on a row index. The node
cell carries the row's place (lane, heading first, node name) as its sort key.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from gputui.domain.model import UpgradeView
from gputui.domain.pane import Pane
from gputui.domain.upgrade_state import UpgradeState
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import JumpRequested
from gputui.ui.render.style import BOLD, Palette
from gputui.ui.render.upgrades import LaneRow, lane_role, lane_rows
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.sortable_text import SortableText
from gputui.ui.widgets.palette_mixin import widget_palette

#: column key -> heading; the reason column takes what is left of the width
COLUMNS = (("node", "node"), ("for", "for"), ("why", "why it waits"))


class UpgradeLanes(LineTable):
    """Upgrade lanes in state-machine order, one row per node."""

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("upgrades")

    class NodeHighlighted(Message):
        """The cursor moved onto ``node`` (None on a lane heading)."""

        def __init__(self, node: str | None) -> None:
            super().__init__()
            self.node = node

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: dict[str, LaneRow] = {}
        self._reason_width = 40
        self.sort_columns = ("node",)
        #: the row key whose node cell carries the ``▶`` (the cursor's node row)
        self._arrow: str | None = None

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(key, label)

    # --- patching ------------------------------------------------------------------------

    def _lane_cells(self, row: LaneRow, palette: Palette) -> dict[str, Text]:
        """A heading or a node; the first cell carries the row's place in the lanes."""
        if row.node is None:
            heading = palette.role(lane_role(row.lane)) + BOLD
            return {"node": SortableText(f"▾ {row.label}", row.order, style=heading),
                    "for": Text(""), "why": Text("")}
        reason = row.reason
        if len(reason) > self._reason_width:
            reason = reason[: self._reason_width - 1] + "…"
        style = palette.role("crit") if row.lane == UpgradeState.FAILED else Style()
        # the cursor's row carries a ▶ (a highlight is only a colour to a screen reader)
        arrow = "▶ " if row.key == self._arrow else "  "
        return {"node": SortableText(f"{arrow}{row.label}", row.order, style=style),
                "for": Text(row.since), "why": Text(reason)}

    def show_view(self, view: UpgradeView, now: float) -> None:
        """Patch rows to ``view``; the cursor stays on the node (or heading) it was on."""
        current = self.current_key
        palette = widget_palette(self)
        wanted = {row.key: row for row in lane_rows(view, now)}
        self.show_rows({key: self._lane_cells(row, palette) for key, row in wanted.items()})
        # a line table draws the rows on screen only: 5,000 lanes rows cost a frame
        self._rows = wanted
        self.restore_cursor(current)
        self._point(self.current_key)

    def _point(self, key: str | None) -> None:
        """Move the ``▶`` to row ``key`` (rewrites the two node cells concerned)."""
        if key == self._arrow:
            return
        old, self._arrow = self._arrow, key
        palette = widget_palette(self)
        for name in (old, key):
            row = self._rows.get(name) if name else None
            if name is not None and row is not None and row.node is not None \
                    and name in self.rows:
                self.write_cells(name, {"node": self._lane_cells(row, palette)["node"]})

    def restore_cursor(self, key: str | None) -> None:
        """Put the cursor back on ``key`` after a sort (or on the first node)."""
        if not self.row_count:
            return
        target = key if key in self._rows else next(
            (k for k, r in self._rows.items() if r.node), None)
        self.move_to_key(target)

    def set_reason_width(self, width: int) -> None:
        """Fit the reason column to the widget: the table never scrolls sideways (the
        next :meth:`show_view` writes the reasons that the new width cuts differently)."""
        self._reason_width = max(20, width)

    def select_node(self, node: str | None) -> None:
        """Put the cursor on ``node`` (a jump from elsewhere)."""
        if node and node in self._rows:
            self.move_to_key(node, force=True)

    # --- cursor and keys -------------------------------------------------------------------

    @property
    def current_node(self) -> str | None:
        """The node under the cursor, None on a lane heading."""
        key = self.current_key
        row = self._rows.get(key) if key else None
        return row.node if row else None

    def cursor_moved(self) -> None:
        self._point(self.current_key)
        self.post_message(self.NodeHighlighted(self.current_node))

    def on_line_table_row_chosen(self, event: LineTable.RowChosen) -> None:
        """A click on the cursor's row opens it, as enter does."""
        event.stop()
        self.action_select_cursor()

    def action_select_cursor(self) -> None:
        """Enter: jump to the node's pipeline (nothing on a lane heading)."""
        node = self.current_node
        if node:
            self.post_message(JumpRequested(node, Pane.PIPELINE))
        else:  # a key that does nothing says why
            self.notify("a lane heading: move to a node below it (↓) to open its pipeline",
                        severity="warning")

