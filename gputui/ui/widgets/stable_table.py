"""``StableTable``: a DataTable whose rendered cells survive updates of *other* cells.

Why: Textual's DataTable keys every render cache on one table-wide ``_update_count``, which
each ``update_cell``, ``add_row``, ``remove_row`` and ``sort`` bumps. At 5,000 nodes a
snapshot changes a few hundred rows, almost all off screen, yet the next frame re-renders
every visible cell through Rich (about 0.1 ms each, a few hundred of them): the frame after
each patch took 30-60 ms, and a key press that landed behind it waited that long.
(The node list has since moved to the line table, :mod:`gputui.ui.widgets.line_table`,
which draws only the rows on screen and needs none of this; StableTable stays for tables
still built on ``DataTable``.)

Here a cell's rendering is cached by *what* it shows instead: the cell's value object (the
node table shares one ``Text`` per distinct cell, and a changed cell gets another object),
its position (Textual stamps the row and column into the segments' mouse metadata), width,
base style, cursor/hover state and the pseudo-class state. A cell whose value object, place
and look are the same renders to the same lines, so the cache needs no invalidation beyond
style changes.

Two more table-wide recomputations go the same way: the row order (``ordered_rows``) and the
line offsets (``_y_offsets``), a 5,000-item rebuild each after every update, are kept while
the row order object is the same (``sort``/``remove_row``/``clear`` replace it) and extended
when rows were appended (``add_row`` grows it; a 15,000-row fill in slices rebuilt both after
each slice). Rows must therefore keep a fixed height (the node table's are one line). New
rows are measured from their ``Text`` directly rather than through Rich. And
:meth:`patch_row` writes a row's changed cells and repaints only that row, and only when it
is on screen, where ``update_cell`` repaints the whole table once per cell.

One more repair: Textual measures new rows' widths on idle (``_update_dimensions``) without
invalidating its row and line caches, so a row painted between ``add_row`` and that idle (a
loaded machine paints before the table's idle comes) kept its label-width rendering:
``gke-  Ready   8/8 ...`` on the first row of an 80x24 start. Here a width change there
invalidates every rendering.

This leans on DataTable internals, all of them accessed through
:mod:`gputui.ui.widgets.datatable_internals`, which lists them and checks them against the
running Textual. When the check fails, the table logs why and behaves as a plain DataTable
(slower, never stale); ``tests/ui/test_datatable_internals.py`` fails loudly instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.widgets.data_table import ColumnKey, Row, RowKey

from gputui.ui.widgets import datatable_internals as dt
from gputui.ui.widgets.keyed_table import KeyedTable

log = logging.getLogger(__name__)

#: the lines of one rendered cell (Textual's private ``textual._types.SegmentLines``)
SegmentLines = list[list[Segment]]
#: cached cell renderings before the cache starts over (visible cells x cursor states x a
#: few scroll positions; clearing is cheap and the next frame refills what it shows)
CELL_CACHE_SIZE = 8192


class StableTable(KeyedTable):
    """A keyed table with a content-keyed cell render cache (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        # set before DataTable.__init__, which already reads the properties below
        self._stable_cells: dict[tuple[object, ...], tuple[object, SegmentLines]] = {}
        self._order_rows: tuple[object, int, list[Row]] = (None, 0, [])
        self._order_offsets: tuple[object, int, list[tuple[RowKey, int]]] = (None, 0, [])
        #: None until checked (first render with columns); False: plain DataTable behaviour
        self._stable: bool | None = None
        super().__init__(**kwargs)

    @property
    def stable(self) -> bool:
        """Whether the internals check passed (checked once, at the first use)."""
        if self._stable is None:
            if not self.columns:
                return False
            problems = dt.contract_problems(self)
            self._stable = not problems
            if problems:
                log.warning("StableTable falls back to plain DataTable: %s",
                            "; ".join(problems))
        return self._stable

    def patch_row(self, row: str, values: Mapping[str, Text]) -> None:
        """Replace some cells of ``row``; repaint that row only, and only when it is shown.

        Columns only grow: a cell wider than its column widens it here, directly. Textual's
        ``update_cell(update_width=True)`` defers that to idle and re-measures the *whole*
        column (5,000 cells) whenever one of the cells it queued is narrower than another.
        """
        if not self.stable:
            for column, value in values.items():
                self.update_cell(row, column, value, update_width=True)
            return
        row_key = RowKey(row)
        data = dt.row_cells(self, row_key)
        grew = False
        for column, value in values.items():
            column_key = ColumnKey(column)
            data[column_key] = value
            meta = self.columns[column_key]
            if value.cell_len > meta.content_width:
                meta.content_width = value.cell_len
                grew = True
        dt.invalidate_renders(self)  # Textual's row and line caches must not serve old text
        if grew:  # every row's cells move: a full repaint, and a new virtual size on idle
            dt.measure_on_idle(self)
            self.refresh()
            self.check_idle()
            return
        index = dt.row_index(self, row_key)
        top = int(self.scroll_y)
        if index is not None and top <= index < top + self.size.height:
            self.refresh_row(index)

    def write_cells(self, key: str, cells: Mapping[str, Text]) -> None:
        """The keyed patcher's writes go through :meth:`patch_row`."""
        self.patch_row(key, cells)

    def remove_rows(self, rows: Iterable[str]) -> None:
        """Remove many rows with one re-indexing.

        ``remove_row`` rebuilds the whole key -> index map for each row it removes, so a
        filter that hides 2,500 of 5,000 nodes took 12 s; this rebuilds it once.
        """
        gone = {RowKey(row) for row in rows if row in self.rows}
        if not gone:
            return
        if not self.stable:
            for key in gone:
                self.remove_row(key)
            return
        dt.drop_rows(self, gone)
        dt.measure_on_idle(self)
        self.cursor_coordinate = self.cursor_coordinate  # clamped to the rows left
        self.hover_coordinate = self.hover_coordinate
        dt.invalidate_renders(self)
        self.refresh(layout=True)
        self.check_idle()

    def remeasure(self) -> None:
        """Measure the columns again on idle (a header label changed)."""
        dt.measure_on_idle(self)
        self.refresh()

    def shown_row_keys(self) -> set[RowKey | None]:
        """Keys of the rows in the viewport (for patching those first)."""
        top = int(self.scroll_y)
        return {dt.row_key_at(self, i)
                for i in range(top, min(self.row_count, top + self.size.height))}

    @property
    def ordered_rows(self) -> list[Row]:
        """Textual's row order, rebuilt only when the order changed (not on cell updates),
        and extended when rows were appended."""
        if not self._stable:
            return super().ordered_rows
        order, count, rows = self._order_rows
        current, total = dt.row_order(self), self.row_count
        keys = ([dt.row_key_at(self, index) for index in range(count, total)]
                if order is current and count < total else [])
        if order is not current or count > total or None in keys:
            rows = super().ordered_rows
        elif keys:  # appended: add_row puts a new row at the next index
            rows = rows + [self.rows[key] for key in keys if key is not None]
        self._order_rows = (current, total, rows)
        return rows

    @property
    def _y_offsets(self) -> list[tuple[RowKey, int]]:
        """Textual's line -> row map, kept like :attr:`ordered_rows` (appended rows extend
        it): a 15,000-row fill rebuilt it after every slice."""
        if not self._stable:
            return super()._y_offsets
        order, count, offsets = self._order_offsets
        current, total = dt.row_order(self), self.row_count
        if order is not current or count > total:
            offsets = super()._y_offsets
        elif count < total:
            offsets = offsets + [(row.key, line) for row in self.ordered_rows[count:]
                                 for line in range(row.height)]
        self._order_offsets = (current, total, offsets)
        return offsets

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """Textual's idle-time measurement; when a column's width changed, every rendering
        made before is stale (see the module docstring), so they are all invalidated."""
        before = [column.content_width for column in self.columns.values()]
        if not (self.stable and dt.widen_for_new_rows(self, list(new_rows))):
            super()._update_dimensions(new_rows)
        if [column.content_width for column in self.columns.values()] != before:
            self.columns_measured()
            dt.invalidate_renders(self)
            self.refresh()

    def columns_measured(self) -> None:
        """A column's width changed (rows came or a cell grew): a subclass that fits its
        columns to the screen decides again here."""

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> SegmentLines:
        """Textual's rendering of one cell, reused while the cell's value object is the same.

        Row labels (column -1) are not used here and go straight to Textual.
        """
        if width <= 0:  # a dropped column (see ``column_drop``): nothing to draw
            row = dt.row_key_at(self, row_index) if row_index >= 0 else None
            height = self.rows[row].height if row is not None else self.header_height
            return [[] for _ in range(height)]
        if column_index < 0 or not self.stable:
            return super()._render_cell(row_index, column_index, base_style, width,
                                        cursor, hover)
        column_key = dt.column_key_at(self, column_index)
        row_key = dt.row_key_at(self, row_index) if row_index >= 0 else None
        if column_key is None or (row_index >= 0 and row_key is None):  # let Textual decide
            return super()._render_cell(row_index, column_index, base_style, width,
                                        cursor, hover)
        if row_key is None:
            value: object = self.columns[column_key].label
        else:
            value = dt.row_cells(self, row_key)[column_key]
        key = (row_index, column_index, id(value), base_style, width, cursor, hover,
               *dt.look(self))
        hit = self._stable_cells.get(key)
        if hit is not None and hit[0] is value:  # id() alone could be a reused address
            return hit[1]
        # Textual's own cell cache is keyed without the width: after a column grew, it would
        # hand back the rendering made at the old width. Ours is keyed with it, so drop theirs.
        dt.forget_textual_cell(self, dt.cell_cache_key(self, row_key, column_key, base_style,
                                                       cursor, hover))
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        if len(self._stable_cells) >= CELL_CACHE_SIZE:
            self._stable_cells.clear()
        self._stable_cells[key] = (value, lines)
        return lines

    def notify_style_update(self) -> None:
        """CSS changed (theme, focus rules): renderings made under the old styles are stale."""
        self._stable_cells.clear()
        super().notify_style_update()

    def _clear_caches(self) -> None:
        self._stable_cells.clear()
        super()._clear_caches()
