"""Every private part of Textual's ``DataTable`` that gputui touches, listed and checked here.

Why a module of its own: :class:`~gputui.ui.widgets.stable_table.StableTable` makes 5,000-row
tables fast by reaching into DataTable's caches and indexes, which Textual may change in any
release. All of that knowledge lives here, nowhere else (``tests/ui/test_datatable_internals``
checks that no other module names these attributes):

================================  ==========================================================
``_row_locations``                row key <-> index (``TwoWayDict``), read and rebuilt
``_column_locations``             column key <-> index, read
``_data``                         row key -> column key -> cell value, written
``_update_count``                 the table-wide version every Textual render cache is keyed on
``_cell_render_cache``            Textual's cell cache; its key is rebuilt by :func:`cell_cache_key`
``_require_update_dimensions``    "measure again on idle"
``_updated_cells``                cells queued for width measurement, pruned on removal
``_header_row_key``               the header row's key in the cell cache
``_show_hover_cursor``, ``_pseudo_class_state``   parts of the cell cache key
``_render_cell(row, col, style, width, cursor, hover)``   the overridden cell renderer
``_update_dimensions(new_rows)``  the idle-time measurement, overridden
``_row_label_column_width``, ``_total_row_height``  read to set the virtual size after it
``_y_offsets``, ``_clear_caches()``               overridden
================================  ==========================================================

:func:`contract_problems` checks all of it against the running Textual, down to the shape of
the cell cache key (a cell is rendered and the key built here must be the one Textual
stored). ``StableTable`` runs it once per table: when anything is off it logs why and falls
back to DataTable's public behaviour, slower but never showing stale cells; the tests fail
loudly instead, so an upgrade of the pin is noticed.
"""

from __future__ import annotations

import inspect
from typing import Any

import textual
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from gputui.ui.widgets.sortable_text import SortableText

#: the Textual release these internals were read from (pyproject pins it exactly)
TESTED_TEXTUAL = "8.2.8"

ATTRIBUTES = ("_row_locations", "_column_locations", "_data", "_update_count",
              "_cell_render_cache", "_require_update_dimensions", "_updated_cells",
              "_header_row_key", "_show_hover_cursor", "_pseudo_class_state",
              "_row_label_column_width", "_total_row_height", "_new_rows")
METHODS: dict[str, tuple[str, ...]] = {
    "_render_cell": ("self", "row_index", "column_index", "base_style", "width", "cursor",
                     "hover"),
    "_update_dimensions": ("self", "new_rows"),
    "_clear_caches": ("self",),
}
PROPERTIES = ("_y_offsets", "ordered_rows")
#: cell types measured from their characters (they render as ``Text`` does)
MEASURED_TYPES = (Text, SortableText)


# ----------------------------------------------------------------------- accessors
def row_index(table: DataTable[Any], row: RowKey) -> int | None:
    index: int | None = table._row_locations.get(row)
    return index


def row_key_at(table: DataTable[Any], index: int) -> RowKey | None:
    key: RowKey | None = table._row_locations.get_key(index)
    return key


def column_key_at(table: DataTable[Any], index: int) -> ColumnKey | None:
    key: ColumnKey | None = table._column_locations.get_key(index)
    return key


def row_order(table: DataTable[Any]) -> object:
    """An object that changes identity whenever rows are reordered or removed."""
    return table._row_locations


def row_cells(table: DataTable[Any], row: RowKey) -> dict[ColumnKey, Any]:
    cells: dict[ColumnKey, Any] = table._data[row]
    return cells


def invalidate_renders(table: DataTable[Any]) -> None:
    """Every Textual render cache (cells, rows, lines) is keyed on this count: bump it."""
    table._update_count += 1


def measure_on_idle(table: DataTable[Any]) -> None:
    table._require_update_dimensions = True


def measure_new_rows_now(table: DataTable[Any]) -> None:
    """Textual's idle-time measurement of the rows added since the last one, now: the
    first screenful is painted right after it is added, and on a loaded machine that paint
    can come before the idle, with every column still as wide as its header."""
    if table._require_update_dimensions:
        table._require_update_dimensions = False
        new_rows = table._new_rows.copy()
        table._new_rows.clear()
        table._update_dimensions(new_rows)


def drop_rows(table: DataTable[Any], rows: set[RowKey]) -> None:
    """Remove ``rows`` with one re-indexing (``remove_row`` re-indexes once per row)."""
    from textual._two_way_dict import TwoWayDict
    from textual.widgets.data_table import CellKey

    locations = table._row_locations
    order = [key for key in map(locations.get_key, range(len(locations))) if key is not None]
    for key in rows:
        for column_key in table._data[key]:
            table._updated_cells.discard(CellKey(key, column_key))
        del table.rows[key]
        del table._data[key]
    table._row_locations = TwoWayDict(
        {key: index for index, key in enumerate(k for k in order if k not in rows)})


def widen_for_new_rows(table: DataTable[Any], new_rows: list[RowKey]) -> bool:
    """DataTable's idle measurement of new rows, for unlabelled one-line rows of ``Text``.

    Textual builds every new row's renderables and measures each cell through Rich (about
    0.1 ms a cell): a 15,000-row fill spent seconds there. A ``Text`` cell measures to its
    widest line, which is read here directly; columns only widen, as in Textual. Returns
    False, having changed nothing, when a row has a label, an automatic height or a cell
    that is not a plain ``Text`` or :class:`SortableText` (which adds only a sort key):
    Textual's own measurement must run then.
    """
    widths: dict[ColumnKey, int] = {}
    for key in new_rows:
        if table._row_locations.get(key) is None:
            continue  # removed before the idle came
        row = table.rows.get(key)
        cells = table._data.get(key)
        if row is None or cells is None or row.label is not None or row.auto_height:
            return False
        for column, value in cells.items():
            if type(value) not in MEASURED_TYPES:
                return False
            plain = value.plain
            width = (max(map(cell_len, plain.splitlines()), default=0) if "\n" in plain
                     else cell_len(plain))
            if width > widths.get(column, 0):
                widths[column] = width
    for column, width in widths.items():
        meta = table.columns.get(column)
        if meta is not None and width > meta.content_width:
            meta.content_width = width
    cells_width = sum(column.get_render_width(table) for column in table.columns.values())
    header = table.header_height if table.show_header else 0
    table.virtual_size = Size(cells_width + table._row_label_column_width,
                              table._total_row_height + header)
    return True


def cell_cache_key(table: DataTable[Any], row: RowKey | None, column: ColumnKey,
                   base_style: Style, cursor: bool, hover: bool) -> Any:
    """The key under which Textual's ``_render_cell`` stores a cell (header: ``row=None``)."""
    return (row if row is not None else table._header_row_key, column, base_style, cursor,
            hover, table._show_hover_cursor, table._update_count, table._pseudo_class_state)


def look(table: DataTable[Any]) -> tuple[object, object]:
    """The parts of a cell's look that are not its arguments: hover cursor shown, and the
    pseudo-class state (focus, hover ...)."""
    return table._show_hover_cursor, table._pseudo_class_state


def forget_textual_cell(table: DataTable[Any], key: Any) -> None:
    table._cell_render_cache.discard(key)


# ------------------------------------------------------------------------- checks
def _signature_problems() -> list[str]:
    problems = []
    for name, expected in METHODS.items():
        method = getattr(DataTable, name, None)
        if method is None:
            problems.append(f"DataTable.{name} is gone")
            continue
        found = tuple(inspect.signature(method).parameters)
        if found != expected:
            problems.append(f"DataTable.{name}{found} != {expected}")
    for name in PROPERTIES:
        if not isinstance(inspect.getattr_static(DataTable, name, None), property):
            problems.append(f"DataTable.{name} is no longer a property")
    return problems


def contract_problems(table: DataTable[Any]) -> list[str]:
    """What no longer holds on this Textual; empty when every internal above is as read.

    ``table`` must be mounted with at least one column (the cache key is checked by
    rendering its first header cell through DataTable's own renderer).
    """
    problems = [] if textual.__version__ == TESTED_TEXTUAL else [
        f"textual {textual.__version__} (internals read from {TESTED_TEXTUAL})"]
    problems += [f"DataTable.{name} is gone" for name in ATTRIBUTES
                 if not hasattr(table, name)]
    problems += _signature_problems()
    if problems or not table.columns:
        return problems
    column = column_key_at(table, 0)
    if column is None:
        return ["no column 0 to check the cell cache key with"]
    style = Style()
    DataTable._render_cell(table, -1, 0, style, 4)
    if cell_cache_key(table, None, column, style, False, False) not in \
            table._cell_render_cache:
        problems.append("DataTable's cell cache key changed shape")
    return problems

