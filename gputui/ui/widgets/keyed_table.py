"""``KeyedTable``: a DataTable patched row by row by key, sorted by keys its cells carry.

Why one patcher: the findings and the upgrade lanes (and the node list, now a line table
with the same ``put_row``/``sort_columns`` contract: :mod:`gputui.ui.widgets.line_table`)
all show rows that a snapshot adds, changes and removes. Clearing and refilling loses the operator's place (the
cursor jumps, the scroll resets) and at 5,000 nodes costs a frame, so each table patches:
remove the rows that went, add the new ones, write only the cells that changed, re-sort,
and put the cursor back on the row *key* it was on, not on a row index.

Why cells carry their sort key: Textual's ``DataTable.sort`` hands the key function the
cells, not the row, and the three tables used to recover what to sort by from the text on
screen (the node name from the name cell, a severity from ``"✖ crit"``, a lane from
``"▾ drain-required (2)"``). Text made for the eye sorts badly (``"12m"`` after ``"3h"``,
``"—"`` anywhere) and breaks silently when the wording changes. A :class:`SortableText`
is the text shown plus the value it sorts by (memray's ``SortableText`` does the same);
sorting reads only that value, and a cell without one in a sorted column is a programming
error that fails loudly instead of sorting by accident.

Sorting is stable as ``DataTable.sort`` is: rows whose keys tie keep the order they were
added in. Tables that need a total order add a tie-breaking column to
:attr:`KeyedTable.sort_columns` (the node list sorts by its column, then the name).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist

from gputui.ui.widgets.datatable_internals import measure_new_rows_now
from gputui.ui.widgets.sortable_text import SortableText, same_cell, sort_key

__all__ = ["KeyedTable", "SortableText", "same_cell", "sort_key"]


def _keys_of_cells(cells: tuple[object, ...]) -> tuple[Any, ...]:
    return tuple(map(sort_key, cells))


class KeyedTable(DataTable[Text]):
    """A DataTable whose rows are patched by key (see the module docstring).

    ``sort_columns``: the columns rows are ordered by, first decides; ``sort_reverse``
    flips the order. Empty: rows stay in the order they were added.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sort_columns: tuple[str, ...] = ()
        self.sort_reverse = False
        self._names: list[str] = []

    # ------------------------------------------------------------------ rows
    def put_row(self, key: str, cells: Mapping[str, Text]) -> bool:
        """Add row ``key``, or write those of ``cells`` that changed (see :func:`same_cell`).

        A new row needs a cell for every column. Returns True when the row may have moved:
        it is new, or the key of one of :attr:`sort_columns` changed.
        """
        if key not in self.rows:
            self.add_row(*map(cells.__getitem__, self._column_names()), key=key)
            return True
        changed: dict[str, Text] = {}
        moved = False
        for column, new in cells.items():
            old = self.get_cell(key, column)
            if same_cell(old, new):
                continue
            changed[column] = new
            if column in self.sort_columns:
                moved = moved or sort_key(old) != sort_key(new)
        if changed:
            self.write_cells(key, changed)
        return moved

    def _column_names(self) -> list[str]:
        """Column keys in display order, kept while the count holds (a 5,000-row fill asks
        once per row; these tables only ever add columns)."""
        if len(self._names) != len(self.columns):
            self._names = [str(column.value) for column in self.columns]
        return self._names

    def write_cells(self, key: str, cells: Mapping[str, Text]) -> None:
        """Write changed cells of one row; columns are measured again on idle."""
        for column, value in cells.items():
            self.update_cell(key, column, value, update_width=True)

    def drop_rows(self, keys: Collection[str]) -> None:
        """Remove the rows ``keys`` (each must be shown)."""
        if len(keys) == 1:
            self.remove_row(next(iter(keys)))
        elif keys:
            self.remove_rows(keys)

    def remove_rows(self, rows: Iterable[str]) -> None:
        """Remove many rows (a faster table overrides this with one re-indexing)."""
        for row in rows:
            self.remove_row(row)

    def show_rows(self, rows: Mapping[str, Mapping[str, Text]]) -> None:
        """Patch the table to exactly ``rows`` (key -> column -> cell) and sort it.

        Removes the rows that are gone, adds the new ones and writes changed cells, in
        that order; the caller puts the cursor back (:meth:`move_to_key`), since tables
        differ on where it goes when its row went.
        """
        self.drop_rows([str(key.value) for key in self.rows if key.value not in rows])
        for key, cells in rows.items():
            self.put_row(key, cells)
        self.measure_new_rows()
        self.sort_rows()

    def measure_new_rows(self) -> None:
        """Measure the rows just added now, not on idle: a loaded machine paints before the
        idle comes, and that paint cut every cell to its header's width (``gke-  Ready``)."""
        measure_new_rows_now(self)

    def sort_rows(self) -> None:
        """Order the rows by the keys their :attr:`sort_columns` cells carry."""
        columns = self.sort_columns
        if not columns:
            return
        self.sort(*columns, key=sort_key if len(columns) == 1 else _keys_of_cells,
                  reverse=self.sort_reverse)

    # ------------------------------------------------------------------ cursor
    @property
    def current_key(self) -> str | None:
        """Key of the row under the cursor; None on an empty table."""
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except CellDoesNotExist:  # the cursor is outside the rows (after a removal)
            return None
        return key.value

    def move_to_key(self, key: str | None, *, scroll: bool = True, force: bool = False) -> bool:
        """Put the cursor on row ``key``; False when that row is not shown.

        A cursor already on the row stays put (a re-sort must not announce a move) unless
        ``force``: a jump scrolls the row into view and announces it again.
        """
        if key is None or key not in self.rows:
            return False
        index = self.get_row_index(key)
        if force or index != self.cursor_row:
            self.move_cursor(row=index, animate=False, scroll=scroll)
        return True
