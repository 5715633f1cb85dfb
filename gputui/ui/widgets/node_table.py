"""``NodeTable``: one row per GPU node, patched by key on every snapshot.

Why patch, not rebuild: at 5,000 nodes a rebuild costs a frame and loses the operator's
place. The domain builder reuses ``NodeView`` objects for unchanged nodes, so an identity
check skips them; for changed nodes only the cells whose text or colour changed are updated.
Rows are keyed by node name; cursor (by key), marks and scroll survive refreshes, filters
and re-sorts. Colour never carries meaning alone: cells keep their symbol and word.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowDoesNotExist

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, NodeView
from gputui.ui.node_rows import COLUMNS, SORTABLE, Cell, NodeFilter, node_cells, sort_value
from gputui.ui.theme import var_style

_ROLE_VAR = {"ok": "gpu-ok", "warn": "gpu-warn", "crit": "gpu-crit", "info": "gpu-info",
             "paused": "gpu-paused", "progress": "gpu-progress", "muted": "gpu-muted"}
MARK = "●"


class NodeTable(DataTable[Text]):
    """The GPU node list. Attributes down (``show_snapshot``), messages up."""

    class NodeSelected(Message):
        """The cursor rests on another node (or none): the detail panes follow it."""

        def __init__(self, node: str | None) -> None:
            super().__init__()
            self.node = node

    class ViewChanged(Message):
        """Filter, sort or marks changed: the screen's subtitle line follows."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self.marks: set[str] = set()
        self.node_filter = NodeFilter()
        self.sort_column = "finding"
        self.sort_reverse = False
        self._views: dict[str, NodeView] = {}
        self._cells: dict[str, dict[str, Cell]] = {}
        self._styles: dict[str, Style] = {}
        self._last_selected: str | None = None
        self.patches = 0  # number of snapshots applied (tests and benchmark)

    def on_mount(self) -> None:
        for column in COLUMNS:
            self.add_column(self._header(column.key, column.label), key=column.key)
        self._refresh_styles()
        self.watch(self.app, "theme", self._theme_changed, init=False)

    # ------------------------------------------------------------------ public API
    @property
    def selected_node(self) -> str | None:
        """The node under the cursor, None on an empty table."""
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except CellDoesNotExist:
            return None
        return key.value

    @property
    def shown_nodes(self) -> list[str]:
        """Node names in display order (after filter and sort)."""
        return [str(row.key.value) for row in self.ordered_rows]

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the rows to ``snapshot`` (``now`` is unused: the list shows no ages)."""
        self.snapshot = snapshot
        self._apply(force_order=False)
        self.patches += 1

    def set_filter(self, node_filter: NodeFilter) -> None:
        """Show only nodes passing ``node_filter``; marks are kept for hidden nodes."""
        self.node_filter = node_filter
        self._apply(force_order=True)
        self.post_message(self.ViewChanged())

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        """Sort by ``column`` (a key of :data:`SORTABLE`); same column again flips order."""
        if reverse is None:
            reverse = (not self.sort_reverse) if column == self.sort_column else False
        self.sort_column, self.sort_reverse = column, reverse
        self._relabel_headers()
        self._resort()
        self.post_message(self.ViewChanged())

    def sort_next(self) -> None:
        """Cycle the sort column left to right."""
        index = (SORTABLE.index(self.sort_column) + 1) % len(SORTABLE)
        self.sort_by(SORTABLE[index], reverse=False)

    def toggle_mark(self, node: str | None = None) -> None:
        """Mark or unmark ``node`` (default: the cursor's), then move down like k9s."""
        node = node or self.selected_node
        if node is None:
            return
        self.marks.symmetric_difference_update({node})
        self._set_mark_cell(node)
        if node == self.selected_node and self.cursor_row < self.row_count - 1:
            self.move_cursor(row=self.cursor_row + 1)
        self.post_message(self.ViewChanged())

    def clear_marks(self) -> None:
        """Unmark every node."""
        marked, self.marks = self.marks, set()
        for node in marked:
            self._set_mark_cell(node)
        self.post_message(self.ViewChanged())

    def select_node(self, node: str) -> bool:
        """Put the cursor on ``node``; False when it is not shown (filtered or absent)."""
        try:
            index = self.get_row_index(node)
        except RowDoesNotExist:
            return False
        self.move_cursor(row=index, animate=False)
        return True

    # ------------------------------------------------------------------ patching
    def _apply(self, force_order: bool) -> None:
        """Diff the shown rows against the snapshot and the filter, then patch."""
        cursor = self.selected_node
        keep = self.node_filter.predicate()
        nodes = self.snapshot.nodes
        wanted = {name for name, view in nodes.items() if keep(view)}
        shown = set(self._views)
        for name in shown - wanted:
            self.remove_row(name)
            del self._views[name]
            self._cells.pop(name, None)
        reorder = force_order or bool(wanted - shown)
        for name in sorted(wanted - shown):
            self._add(nodes[name])
        for name in wanted & shown:
            view = nodes[name]
            if view is not self._views[name]:
                reorder |= self._patch(view) or force_order
        if reorder:
            self._resort(cursor)
        if cursor is None and self.row_count:
            self.move_cursor(row=0, animate=False)  # first fill: start at the top
        self._restore_cursor(cursor)

    def _add(self, view: NodeView) -> None:
        cells = node_cells(view)
        self._views[view.name] = view
        self._cells[view.name] = cells
        row = [self._mark_text(view.name)] + [self._text(cells[c.key]) for c in COLUMNS[1:]]
        self.add_row(*row, key=view.name)

    def _patch(self, view: NodeView) -> bool:
        """Update changed cells of one row; True when the sort column's value changed."""
        old_view = self._views[view.name]
        old = self._cells[view.name]
        cells = node_cells(view)
        for key, cell in cells.items():
            if old.get(key) != cell:
                self.update_cell(view.name, key, self._text(cell), update_width=True)
        self._views[view.name] = view
        self._cells[view.name] = cells
        return sort_value(self.sort_column, old_view) != sort_value(self.sort_column, view)

    def _resort(self, cursor: str | None = None) -> None:
        """Re-order rows; the cursor stays on ``cursor`` (default: the node under it)."""
        cursor = cursor or self.selected_node
        views = self._views
        column = self.sort_column
        self.sort("name", key=lambda name: sort_value(column, views[name.plain]),
                  reverse=self.sort_reverse)
        self._restore_cursor(cursor)

    def _restore_cursor(self, node: str | None) -> None:
        if node is not None and node in self._views:
            index = self.get_row_index(node)
            if index != self.cursor_row:
                self.move_cursor(row=index, animate=False, scroll=False)
        self._notify_selection()

    def _notify_selection(self) -> None:
        node = self.selected_node
        if node != self._last_selected:
            self._last_selected = node
            self.post_message(self.NodeSelected(node))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved: tell the screen (once per node)."""
        event.stop()
        self._notify_selection()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """Clicking a header sorts by it (again flips the order)."""
        event.stop()
        key = event.column_key.value
        if key in SORTABLE:
            self.sort_by(str(key))

    # ------------------------------------------------------------------ cells and styles
    def _text(self, cell: Cell) -> Text:
        text, role = cell
        return Text(text, style=self._styles.get(role, ""), no_wrap=True, end="")

    def _mark_text(self, node: str) -> Text:
        return Text(MARK if node in self.marks else " ", style=self._styles.get("info", ""))

    def _set_mark_cell(self, node: str) -> None:
        if node in self._views:
            self.update_cell(node, "mark", self._mark_text(node))

    def _header(self, key: str, label: str) -> Text:
        if key == self.sort_column:
            return Text(label + (" ▼" if self.sort_reverse else " ▲"), style="bold")
        return Text(label)

    def _relabel_headers(self) -> None:
        for column in COLUMNS:
            col = self.columns.get(ColumnKey(column.key))
            if col is not None:
                col.label = self._header(column.key, column.label)
        self._require_update_dimensions = True
        self.refresh()

    def _refresh_styles(self) -> None:
        variables: Mapping[str, str] = self.app.theme_variables or self.app.get_css_variables()
        self._styles = {role: var_style(variables, name, bold=role == "crit")
                        for role, name in _ROLE_VAR.items()}

    def _theme_changed(self) -> None:
        """Re-colour every shown cell from the new theme's variables."""
        self._refresh_styles()
        for name, cells in self._cells.items():
            for key, cell in cells.items():
                self.update_cell(name, key, self._text(cell))
            self._set_mark_cell(name)
