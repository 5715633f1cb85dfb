"""``StableTable``: a DataTable whose rendered cells survive updates of *other* cells.

Why: Textual's DataTable keys every render cache on one table-wide ``_update_count``, which
each ``update_cell``, ``add_row``, ``remove_row`` and ``sort`` bumps. At 5,000 nodes a
snapshot changes a few hundred rows, almost all off screen, yet the next frame re-renders
every visible cell through Rich (about 0.1 ms each, a few hundred of them): the frame after
each patch took 30-60 ms, and a key press that landed behind it waited that long.

Here a cell's rendering is cached by *what* it shows instead: the cell's value object (the
node table shares one ``Text`` per distinct cell, and a changed cell gets another object),
its position (Textual stamps the row and column into the segments' mouse metadata), width,
base style, cursor/hover state and the pseudo-class state. A cell whose value object, place
and look are the same renders to the same lines, so the cache needs no invalidation beyond
style changes.

Two more table-wide recomputations go the same way: the row order (``ordered_rows``) and the
line offsets (``_y_offsets``), a 5,000-item rebuild each after every update, are kept while
the row order object is the same (``sort``/``remove_row``/``clear`` replace it, ``add_row``
grows it). Rows must therefore keep a fixed height (the node table's are one line). And
:meth:`patch_row` writes a row's changed cells and repaints only that row, and only when it
is on screen, where ``update_cell`` repaints the whole table once per cell.

This leans on DataTable internals (``_render_cell`` and the attributes it reads), which is
why Textual is pinned exactly; ``tests/ui/test_node_table_render.py`` checks the contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.style import Style
from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual._types import SegmentLines
from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, ColumnKey, Row, RowKey

#: cached cell renderings before the cache starts over (visible cells x cursor states x a
#: few scroll positions; clearing is cheap and the next frame refills what it shows)
CELL_CACHE_SIZE = 8192


class StableTable(DataTable[Text]):
    """A DataTable with a content-keyed cell render cache (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        # set before DataTable.__init__, which already reads the properties below
        self._stable_cells: dict[tuple[object, ...], tuple[object, SegmentLines]] = {}
        self._order_rows: tuple[TwoWayDict[RowKey, int] | None, int, list[Row]] = (None, 0, [])
        self._order_offsets: tuple[TwoWayDict[RowKey, int] | None, int,
                                   list[tuple[RowKey, int]]] = (None, 0, [])
        super().__init__(**kwargs)

    def patch_row(self, row: str, values: Mapping[str, Text]) -> None:
        """Replace some cells of ``row``; repaint that row only, and only when it is shown.

        Columns only grow: a cell wider than its column widens it here, directly. Textual's
        ``update_cell(update_width=True)`` defers that to idle and re-measures the *whole*
        column (5,000 cells) whenever one of the cells it queued is narrower than another.
        """
        row_key = RowKey(row)
        data = self._data[row_key]
        grew = False
        for column, value in values.items():
            column_key = ColumnKey(column)
            data[column_key] = value
            meta = self.columns[column_key]
            if value.cell_len > meta.content_width:
                meta.content_width = value.cell_len
                grew = True
        self._update_count += 1  # Textual's row and line caches must not serve the old text
        if grew:  # every row's cells move: a full repaint, and a new virtual size on idle
            self._require_update_dimensions = True
            self.refresh()
            self.check_idle()
            return
        index = self._row_locations.get(row_key)
        top = int(self.scroll_y)
        if index is not None and top <= index < top + self.size.height:
            self.refresh_row(index)

    def remove_rows(self, rows: Iterable[str]) -> None:
        """Remove many rows with one re-indexing.

        ``remove_row`` rebuilds the whole key -> index map for each row it removes, so a
        filter that hides 2,500 of 5,000 nodes took 12 s; this rebuilds it once.
        """
        locations = self._row_locations
        gone = {RowKey(row) for row in rows if row in locations}
        if not gone:
            return
        order = [key for key in map(locations.get_key, range(len(locations))) if key is not None]
        for key in gone:
            for column_key in self._data[key]:
                self._updated_cells.discard(CellKey(key, column_key))
            del self.rows[key]
            del self._data[key]
        self._row_locations = TwoWayDict(
            {key: index for index, key in enumerate(k for k in order if k not in gone)})
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate  # clamped to the rows left
        self.hover_coordinate = self.hover_coordinate
        self._update_count += 1
        self.refresh(layout=True)
        self.check_idle()

    @property
    def ordered_rows(self) -> list[Row]:
        """Textual's row order, rebuilt only when the order changed (not on cell updates)."""
        locations, count, rows = self._order_rows
        if locations is not self._row_locations or count != len(self._row_locations):
            rows = super().ordered_rows
            self._order_rows = (self._row_locations, len(self._row_locations), rows)
        return rows

    @property
    def _y_offsets(self) -> list[tuple[RowKey, int]]:
        """Textual's line -> row map, rebuilt only when the order changed (fixed heights)."""
        locations, count, offsets = self._order_offsets
        if locations is not self._row_locations or count != len(self._row_locations):
            offsets = super()._y_offsets
            self._order_offsets = (self._row_locations, len(self._row_locations), offsets)
        return offsets

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> SegmentLines:
        """Textual's rendering of one cell, reused while the cell's value object is the same.

        Row labels (column -1) are not used here and go straight to Textual.
        """
        if column_index < 0:
            return super()._render_cell(row_index, column_index, base_style, width,
                                        cursor, hover)
        column_key = self._column_locations.get_key(column_index)
        row_key = self._row_locations.get_key(row_index) if row_index >= 0 else None
        if column_key is None or (row_index >= 0 and row_key is None):  # let Textual decide
            return super()._render_cell(row_index, column_index, base_style, width,
                                        cursor, hover)
        if row_key is None:
            value: object = self.columns[column_key].label
        else:
            value = self._data[row_key][column_key]
        key = (row_index, column_index, id(value), base_style, width, cursor, hover,
               self._show_hover_cursor, self._pseudo_class_state)
        hit = self._stable_cells.get(key)
        if hit is not None and hit[0] is value:  # id() alone could be a reused address
            return hit[1]
        # Textual's own cell cache is keyed without the width: after a column grew, it would
        # hand back the rendering made at the old width. Ours is keyed with it, so drop theirs.
        self._cell_render_cache.discard((row_key if row_key is not None else
                                         self._header_row_key, column_key, base_style, cursor,
                                         hover, self._show_hover_cursor, self._update_count,
                                         self._pseudo_class_state))
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
