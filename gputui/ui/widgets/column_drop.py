"""Columns that give way, lowest priority first, when the table is wider than the terminal.

Why: at 80 columns a table simply cut at the right edge loses whatever comes last and slices
the column in the middle of a word; a wide cell (``NotReady,SchedulingDisabled``) then pushes
the worst finding, the one column the node list exists for, half off the screen. Instead the
table names the columns it may drop in the order they go, and one it must always show; a
dropped column takes no width at all (its header too), and comes back when the terminal
grows. Only whole columns go: what is shown is never cut mid-word by a neighbour's width.

The rule itself (:func:`columns_to_drop`) is plain and shared with the line table
(:mod:`gputui.ui.widgets.table_columns`), which the node list is drawn with; this module
applies it to a ``DataTable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import Column

from gputui.ui.widgets import datatable_internals as dt
from gputui.ui.widgets.stable_table import StableTable
from gputui.ui.widgets.table_columns import columns_to_drop


@dataclass
class DroppableColumn(Column):
    """A column that renders zero cells wide while :attr:`dropped` (header and cells)."""

    dropped: bool = False

    def get_render_width(self, data_table: DataTable[Any]) -> int:
        if self.dropped:
            return 0
        return super().get_render_width(data_table)


def make_droppable(table: DataTable[Any]) -> None:
    """Swap each of ``table``'s columns for a :class:`DroppableColumn` with the same fields
    (``DataTable.add_column`` makes plain ones)."""
    for key, column in list(table.columns.items()):
        if not isinstance(column, DroppableColumn):
            table.columns[key] = DroppableColumn(column.key, column.label, column.width,
                                                 column.content_width, column.auto_width)


def drop_to_fit(table: DataTable[Any], priority: Sequence[str], keep: frozenset[str],
                available: int) -> bool:
    """Drop (or bring back) ``table``'s columns to fit ``available`` cells; True on a change.

    Columns not named in ``priority`` are never dropped and count as kept. The virtual
    width follows at once, so no horizontal scroll bar offers the dropped columns' space.
    """
    if available <= 0:  # not laid out yet: decide on the first resize
        return False
    columns = {str(key.value): column for key, column in table.columns.items()
               if isinstance(column, DroppableColumn)}
    fixed = sum(_full_width(column, table) for key, column in table.columns.items()
                if str(key.value) not in priority)
    widths = [(name, _full_width(columns[name], table)) for name in priority
              if name in columns]
    drop = columns_to_drop(widths, available - fixed, keep)
    changed = False
    for name, column in columns.items():
        if column.dropped != (name in drop):
            column.dropped = name in drop
            changed = True
    if changed:
        width = sum(column.get_render_width(table) for column in table.columns.values())
        table.virtual_size = Size(width, table.virtual_size.height)
    return changed


def dropped_columns(table: DataTable[Any]) -> list[str]:
    """The keys of ``table``'s columns dropped now, left to right."""
    return [str(key.value) for key, column in table.columns.items()
            if isinstance(column, DroppableColumn) and column.dropped]


def _full_width(column: Column, table: DataTable[Any]) -> int:
    """The width ``column`` takes when shown (whether or not it is dropped now)."""
    return 2 * table.cell_padding + (column.content_width if column.auto_width
                                     else column.width)



class FitsColumns(StableTable):
    """A table that drops its least important columns to fit its width (see the module
    docstring): :attr:`drop_order` names the droppable ones, most important first, and
    :attr:`always_shown` those that never go."""

    drop_order: tuple[str, ...] = ()
    always_shown: frozenset[str] = frozenset()

    @property
    def dropped(self) -> list[str]:
        """The keys of the columns dropped now, left to right."""
        return dropped_columns(self)

    def add_droppable_columns(self) -> None:
        """Call once the columns are added: they become droppable and fit at once."""
        make_droppable(self)
        self._fit_columns()

    def on_resize(self) -> None:
        self._fit_columns()

    def columns_measured(self) -> None:
        self._fit_columns()

    def columns_fitted(self) -> None:
        """The set of dropped columns changed (a subclass tells its screen)."""

    def _fit_columns(self) -> None:
        available = self.scrollable_content_region.width
        if drop_to_fit(self, self.drop_order, self.always_shown, available):
            dt.invalidate_renders(self)
            self.refresh()
            self.columns_fitted()


__all__ = ["DroppableColumn", "FitsColumns", "columns_to_drop", "drop_to_fit", "dropped_columns",
           "make_droppable"]
