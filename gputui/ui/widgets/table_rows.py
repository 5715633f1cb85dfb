"""``KeyedRows``: a line table's rows, keyed by name, in display order, with their cells.

Plain data, no Textual, so each operation's cost is plain to see and a test can check it
without an app: adding a row is a dict insert and a width check per cell, writing cells
touches that row only, dropping many rows re-indexes once, sorting is one ``list.sort`` by
the keys the cells carry (:class:`~gputui.ui.widgets.sortable_text.SortableText`). Nothing
here renders; each row carries a *stamp* that changes whenever its cells do, so the table
can keep a row's drawing until then.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import count
from typing import Any

from rich.text import Text

from gputui.ui.widgets.sortable_text import sort_key
from gputui.ui.widgets.table_columns import TableColumn, widen_for


class KeyedRows:
    """Rows in display order; each row a key and one ``Text`` per column."""

    def __init__(self) -> None:
        #: column key -> column, in display order
        self.columns: dict[str, TableColumn] = {}
        self._cells: dict[str, dict[str, Text]] = {}
        self._order: list[str] = []
        self._index: dict[str, int] = {}
        self._stamps: dict[str, int] = {}
        self._counter = count(1)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, key: object) -> bool:
        return key in self._cells

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    @property
    def keys(self) -> Sequence[str]:
        """Row keys in display order (the table's own list: do not change it)."""
        return self._order

    def index(self, key: str) -> int | None:
        """The row's place in display order; None for a row not in the table."""
        return self._index.get(key)

    def key_at(self, index: int) -> str | None:
        """The key of the row at ``index``; None outside the rows."""
        return self._order[index] if 0 <= index < len(self._order) else None

    def cells(self, key: str) -> Mapping[str, Text]:
        """Column key -> cell of row ``key`` (KeyError for a row not in the table)."""
        return self._cells[key]

    def stamp(self, key: str) -> int:
        """A number that changes whenever row ``key``'s cells do."""
        return self._stamps[key]

    # ------------------------------------------------------------------ writing
    def add_column(self, column: TableColumn) -> None:
        """A new column, last; it is as wide as its label at least."""
        column.widen(column.label.cell_len)
        self.columns[column.key] = column

    def add(self, key: str, cells: Mapping[str, Text], measured: Collection[str] = ()) -> bool:
        """Append row ``key``, which needs a cell for every column; True when a column grew.
        Cells of the ``measured`` columns are known to fit (they were shown before): a
        filter cleared brings back thousands of rows, and measuring each cell again cost
        a fifth of it."""
        if key in self._cells:
            raise KeyError(f"row {key!r} is already in the table")
        row = {column: cells[column] for column in self.columns}
        self._cells[key] = row
        self._index[key] = len(self._order)
        self._order.append(key)
        self._stamps[key] = next(self._counter)
        if measured:
            return widen_for(self.columns, [(c, t) for c, t in row.items() if c not in measured])
        return widen_for(self.columns, row.items())

    def write(self, key: str, cells: Mapping[str, Text]) -> bool:
        """Replace some cells of row ``key``; True when a column grew."""
        self._cells[key].update(cells)
        self._stamps[key] = next(self._counter)
        return widen_for(self.columns, cells.items())

    def drop(self, keys: Collection[str]) -> int:
        """Remove the rows ``keys`` that are in the table, re-indexing once; how many went."""
        gone = {key for key in keys if key in self._cells}
        for key in gone:
            del self._cells[key], self._stamps[key]
        if gone:
            self._order = [key for key in self._order if key not in gone]
            self._reindex()
        return len(gone)

    def sort_by_keys(self, columns: Sequence[str], reverse: bool = False) -> None:
        """Order the rows by the keys their ``columns`` cells carry, first column first.

        Stable: rows whose keys tie keep their order. A cell without a key in a sorted
        column raises TypeError (see :func:`~gputui.ui.widgets.sortable_text.sort_key`).
        """
        if not columns:
            return
        cells = self._cells

        def row_key(key: str) -> tuple[Any, ...]:
            row = cells[key]
            return tuple([sort_key(row[column]) for column in columns])

        self._order.sort(key=row_key, reverse=reverse)
        self._reindex()

    def _reindex(self) -> None:
        self._index = {key: index for index, key in enumerate(self._order)}


__all__ = ["KeyedRows"]
