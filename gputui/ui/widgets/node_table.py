"""``NodeTable``: one row per GPU node, patched by key on every snapshot.

Why patch, not rebuild: at 5,000 nodes a rebuild costs a frame and loses the operator's
place. The domain builder reuses ``NodeView`` objects for unchanged nodes, so an identity
check skips them; for changed nodes only the cells whose text or colour changed are updated.
Rows are keyed by node name; cursor (by key), marks and scroll survive refreshes, filters
and re-sorts. Colour never carries meaning alone: cells keep their symbol and word.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rich.text import Text
from textual import events, on
from textual.message import Message

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, NodeView
from gputui.ui.node_rows import (
    ALWAYS_SHOWN,
    COLUMNS,
    DROP_ORDER,
    METRIC_COLUMNS,
    SORTABLE,
    UNREAD_UTIL,
    Cell,
    LabelTexts,
    NodeFilter,
    no_util,
    requeue,
    sort_columns_for,
    sort_value,
    util_cell,
)
from gputui.ui.loop_turn import after_loop_turn
from gputui.ui.widgets.cell_texts import CellTexts
from gputui.ui.widgets.mark_column import MarkColumn
from gputui.ui.widgets.node_row_texts import NodeRowTexts
from gputui.ui.widgets.palette_mixin import widget_palette

#: rows patched per event-loop turn: about a millisecond of work, so a key press that
#: arrives during a 250-row patch waits for one slice, not for the whole patch
PATCH_SLICE = 48
#: seconds between looks at whether a covered list may go on filling
PAUSED_SLICE_WAIT = 0.1
#: characters of the utilisation cell (``█  98%``)
UTIL_WIDTH = 6


class NodeTable(MarkColumn):
    """The GPU node list. Attributes down (``show_snapshot``), messages up."""

    class NodeSelected(Message):
        """The cursor rests on another node (or none): the detail panes follow it."""

        def __init__(self, node: str | None) -> None:
            super().__init__()
            self.node = node

    class ViewChanged(Message):
        """Filter, sort or marks changed: the screen's subtitle line follows."""

    drop_order, always_shown = DROP_ORDER, ALWAYS_SHOWN

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self.marks: set[str] = set()
        self.node_filter = NodeFilter()
        self.sort_columns = sort_columns_for("finding")
        self._views: dict[str, NodeView] = {}
        self._util: dict[str, Cell] = {}
        self._cell_texts = CellTexts()
        self._row_texts = NodeRowTexts(self._cell_texts)
        self._label_texts = LabelTexts()
        self._seen: dict[str, NodeView] = {}
        self._at_top = True
        self._last_selected: str | None = None
        self.patches = 0  # number of snapshots applied (tests and benchmark)
        #: rows patched per event-loop turn (see ``_patch_slice``)
        self.patch_slice = PATCH_SLICE
        self._queue: list[str] = []
        self._slice_queued = False
        self._reorder = False
        self._filling = False  # a first fill is being appended in sort order, slice by slice
        self._counted_rows = 0
        self._queued, self._dirty = requeue({}, (), set())  # cluster findings naming nodes

    def on_mount(self) -> None:
        for column in COLUMNS:
            # metric columns fill after the rows exist: give them their width up front
            width = UTIL_WIDTH if column.key in METRIC_COLUMNS else None
            self.add_column(column.key, self._header(column.key, column.label), width=width)
        self._refresh_styles()
        # the app's theme-changed signal comes after it has rebuilt its palette (a watch on
        # ``theme`` ran before, and recoloured the cells with the old theme's colours)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    # ------------------------------------------------------------------ public API
    @property
    def selected_node(self) -> str | None:
        """The node under the cursor, None on an empty table."""
        return self.current_key

    @property
    def sort_column(self) -> str:
        """The column rows are sorted by (ties go by name)."""
        return self.sort_columns[0]

    @property
    def filling(self) -> bool:
        """A first fill is still appending rows (the row count is not yet what is shown)."""
        return self._filling

    @property
    def shown_nodes(self) -> list[str]:
        """Node names in display order (after filter and sort)."""
        return list(self.row_keys)

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the rows to ``snapshot`` (``now`` is unused: the list shows no ages)."""
        self.snapshot = snapshot
        self._queued, self._dirty = requeue(self._queued, snapshot.findings, self._dirty)
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
        self.sort_columns, self.sort_reverse = sort_columns_for(column), reverse
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

    def rows_on_screen(self) -> list[str]:
        """The nodes of the rows currently scrolled into view (what metrics are read for)."""
        return self.visible_keys()

    def show_util(self, util: Mapping[str, float], unread: Collection[str] = ()) -> None:
        """Fill the utilisation column of the rows that have a reading (rows on screen);
        rows whose metrics could not be read (``unread``) show ``?``, not their last value."""
        cells = {**{name: UNREAD_UTIL for name in unread},
                 **{name: util_cell(value) for name, value in util.items()}}
        for name, cell in cells.items():
            if name in self._views and self._util.get(name) != cell:
                self._util[name] = cell
                self.write_cells(name, {"util": self._text(cell)})

    def clear_marks(self) -> None:
        """Unmark every node."""
        marked, self.marks = self.marks, set()
        for node in marked:
            self._set_mark_cell(node)
        self.post_message(self.ViewChanged())

    def select_node(self, node: str) -> bool:
        """Put the cursor on ``node``; False when it is not shown (filtered or absent)."""
        self._at_top = False
        return self.move_to_key(node, force=True)

    def columns_fitted(self) -> None:
        self.post_message(self.ViewChanged())  # the subtitle says what was dropped

    # ------------------------------------------------------------------ patching
    def _apply(self, force_order: bool) -> None:
        """Diff the shown rows against the snapshot and the filter, then patch.

        Nodes whose ``NodeView`` is the very object seen last time are skipped before the
        filter runs (the builder reuses views of unchanged nodes), so a snapshot that
        changed 100 of 5,000 nodes costs 100 rows of work, not 5,000. A filter change
        (``force_order``) re-evaluates every node at once; a snapshot's changed rows are
        patched in slices of :attr:`patch_slice`, on-screen rows first (see
        :meth:`_patch_slice`).
        """
        nodes = self.snapshot.nodes
        if force_order:
            self._seen.clear()
            self._reorder = True
        seen = self._seen
        queue = [n for n in self._views if n not in nodes]
        queue += [n for n, view in nodes.items() if seen.get(n) is not view or n in self._dirty]
        if len(seen) > len(nodes):  # nodes left: forget what was kept of them
            self._seen = {name: view for name, view in seen.items() if name in nodes}
            self._row_texts.keep_only(nodes)
            self._label_texts.keep_only(nodes)
        self._filling = False
        if not force_order and not self._views and len(queue) > self.patch_slice:
            self._first_fill(queue)
            return
        if force_order or not self._views or len(queue) <= self.patch_slice:
            self._queue = queue  # a newer snapshot wins: a partial patch is superseded
            self._patch_slice(len(queue))
            return
        shown = set(self.visible_keys())
        self._queue = sorted(queue, key=lambda name: name not in shown)  # stable: on-screen first
        self._patch_slice(self.patch_slice)

    def _first_fill(self, queue: list[str]) -> None:
        """Into an empty table: sorted once, then appended top-down in slices, the first a
        screenful, so the first rows show at once instead of after all 5,000 (no re-sort:
        appending in sort order keeps the order)."""
        nodes, column = self.snapshot.nodes, self.sort_column
        queue.sort(key=lambda n: sort_value(column, nodes[n], self._queued.get(n)),
                   reverse=self.sort_reverse)
        self._queue, self._filling = queue, True
        self._patch_slice(max(self.patch_slice, self.size.height))

    def _patch_slice(self, limit: int) -> None:
        """Patch the next ``limit`` queued rows; queue the rest for the next event-loop turn.

        Why slices: a key press waits for whatever runs before it; a slice is a millisecond
        or two. Each queued name is patched from the *newest* snapshot, so a slice that
        runs after a newer snapshot arrived is still correct. Re-sorting waits for the
        last slice (new rows sit at the bottom until then).
        """
        # until the operator moves, the cursor stays on the top (worst) row as rows re-sort
        cursor = None if self._at_top else self.selected_node
        batch, self._queue = self._queue[:limit], self._queue[limit:]
        had_rows = bool(self._views)
        with self.bulk():  # the table is sized and drawn once per slice
            new, drops = self._patch_names(batch)
            self._drop_all(drops)
            self._add_all(new, in_order=not had_rows and not self._filling)
        self._reorder |= bool(new and had_rows and not self._filling)
        if self._queue:
            self._restore_cursor(cursor)
            if not self._slice_queued:
                self._slice_queued = True
                if self._filling and not had_rows:  # paint the first screenful, then go on
                    self.call_after_refresh(self._next_slice)
                else:  # keys first: the loop runs what is ready between slices
                    after_loop_turn(self, self._next_slice)
            return
        self._finish_patch(cursor)

    def _patch_names(self, names: list[str]) -> tuple[list[str], list[str]]:
        """Patch the shown rows of ``names`` from the newest snapshot; return the names to
        add and the names to drop (gone from the snapshot or filtered out)."""
        keep = self.node_filter.predicate(self._queued, self._label_texts)
        nodes, seen = self.snapshot.nodes, self._seen
        new: list[str] = []
        drops: list[str] = []
        for name in names:
            view = nodes.get(name)
            shown = name in self._views
            if view is None or not keep(view):
                if shown:
                    drops.append(name)
                if view is not None:
                    seen[name] = view
                continue
            seen[name] = view
            if not shown:
                new.append(name)
            elif view is not self._views[name] or name in self._dirty:
                self._reorder |= self._patch(view) or name in self._dirty
        return new, drops

    def _next_slice(self) -> None:
        self._slice_queued = False
        if self._queue and self.screen is not self.app.screen:  # under the ``:`` prompt or a
            self._slice_queued = True  # dialog: the keys typed there come first, each frame
            self.set_timer(PAUSED_SLICE_WAIT, self._next_slice)  # drew this screen anew
        elif self._queue:
            self._patch_slice(self.patch_slice)

    def _finish_patch(self, cursor: str | None) -> None:
        """The last slice ran: re-sort if a sort value changed or rows came, settle the cursor."""
        self._filling, self._dirty = False, set()  # every dirty row was in the last queue
        if self._reorder:
            self._reorder = False
            self._resort(cursor)
        if cursor is None and self.row_count:
            self.move_cursor(row=0, animate=False)  # first fill: start at the top
        self._restore_cursor(cursor)
        if self.row_count != self._counted_rows:  # rows came or went: the subtitle follows
            self._counted_rows = self.row_count
            self.post_message(self.ViewChanged())

    def _add_all(self, names: list[str], in_order: bool) -> None:
        """Add rows; into an empty table already sorted (no re-sort of 5,000 rows after)."""
        nodes, column = self.snapshot.nodes, self.sort_column
        if in_order:
            names.sort(key=lambda n: sort_value(column, nodes[n], self._queued.get(n)),
                       reverse=self.sort_reverse)
        for name in names:
            self._add(nodes[name])

    def _drop_all(self, names: list[str]) -> None:
        """Remove rows: one by one is O(rows) each, so a filter's many go in one re-index."""
        self.drop_rows(names)
        for name in names:
            del self._views[name]
            self._util.pop(name, None)

    def _add(self, view: NodeView) -> None:
        self._views[view.name] = view
        util = self._text(self._util.get(view.name, no_util(view)))
        cells, measured = self._row_texts.cells(view, self._queued.get(view.name))
        self.add_row(view.name, {"mark": self._mark_text(view.name), "util": util, **cells},
                     measured=cells.keys() if measured else ())

    def _patch(self, view: NodeView) -> bool:
        """Write the changed cells of one row; True when its place in the sort changed."""
        old = self._views.get(view.name)
        self._views[view.name] = view
        if view.name not in self._util and (old is None
                                            or old.health_unknown != view.health_unknown):
            self.write_cells(view.name, {"util": self._text(no_util(view))})
        return self.put_row(view.name, self._data_texts(view))

    def _resort(self, cursor: str | None = None) -> None:
        """Re-order rows; the cursor stays on ``cursor`` (default: the node under it)."""
        cursor = cursor or self.selected_node
        self.sort_rows()
        self._restore_cursor(cursor)

    def _restore_cursor(self, node: str | None) -> None:
        self.move_to_key(node)
        self._notify_selection()

    def _notify_selection(self) -> None:
        node = self.selected_node
        self.show_arrow(node)
        if node != self._last_selected:
            self._last_selected = node
            self.post_message(self.NodeSelected(node))

    def cursor_moved(self) -> None:
        """The cursor moved: tell the screen (once per node)."""
        self._notify_selection()

    def on_key(self) -> None:
        """The operator took the wheel: from now on the cursor follows its node."""
        self._at_top = False

    @on(events.Click)
    def _took_wheel(self) -> None:
        """A click too (the table's own click handler moves the cursor)."""
        self._at_top = False

    def header_clicked(self, column: str) -> None:
        """Clicking a header sorts by it (again flips the order)."""
        if column in SORTABLE:
            self.sort_by(column)

    # ------------------------------------------------------------------ cells and styles
    def _text(self, cell: Cell) -> Text:
        return self._cell_texts.text(cell)

    def _data_texts(self, view: NodeView) -> dict[str, Text]:
        """The snapshot's cells of ``view``'s row, each carrying its sort key."""
        return self._row_texts.cells(view, self._queued.get(view.name))[0]

    def _header(self, key: str, label: str) -> Text:
        if key == self.sort_column:
            return Text(label + (" ▼" if self.sort_reverse else " ▲"), style="bold")
        return Text(label)

    def _relabel_headers(self) -> None:
        for column in COLUMNS:
            self.set_label(column.key, self._header(column.key, column.label))

    def _refresh_styles(self) -> None:
        self._cell_texts.restyle(widget_palette(self))
        self._row_texts.clear()

    def _theme_changed(self, _theme: object = None) -> None:
        """Re-colour every shown cell from the new theme's palette."""
        self._refresh_styles()
        with self.bulk():
            for name, view in self._views.items():
                util = self._text(self._util.get(name, no_util(view)))
                self.put_row(name, {**self._data_texts(view), "util": util,
                                    "mark": self._mark_text(name)})
