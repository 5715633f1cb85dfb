"""A line table's columns: their widths, measured from content, and which give way to fit.

Plain data, no Textual: the line table (:mod:`gputui.ui.widgets.line_table`) asks here how
wide each column is and which columns to drop, and a test can ask the same without an app.

Widths: a column is as wide as its widest cell or its header label (or a fixed width given
when it was added), plus one cell of padding on each side, as Textual's ``DataTable`` draws
them. Widths only grow while the table lives: a node list whose columns narrowed each time a
filter hid the longest name would make every column jump under the operator's eyes.

Dropping: when the columns are wider than the table, the least important ones go first,
never one that must always be shown; a dropped column takes no width at all, its header
neither, and comes back when the terminal grows. Why: at 80 columns a table simply cut at
the right edge loses whatever comes last and slices the column in the middle of a word; a
wide cell (``NotReady,SchedulingDisabled``) then pushes the worst finding, the one column
the node list exists for, half off the screen. Only whole columns go: what is shown is
never cut mid-word by a neighbour's width.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text


@dataclass
class TableColumn:
    """One column: its key, header label, fixed width (None: measured) and state."""

    key: str
    label: Text
    #: the content width given when added; None: as wide as the widest cell or label
    fixed_width: int | None = None
    #: the widest cell or label seen so far (cells)
    content_width: int = 0
    #: given way to fit a narrow terminal (see :func:`fit_columns`)
    dropped: bool = False

    def full_width(self, padding: int) -> int:
        """The cells this column takes when shown, padding included."""
        width = self.content_width if self.fixed_width is None else self.fixed_width
        return width + 2 * padding

    def render_width(self, padding: int) -> int:
        """The cells this column takes now: none while dropped."""
        return 0 if self.dropped else self.full_width(padding)

    def widen(self, width: int) -> bool:
        """Make room for content ``width`` cells wide; True when the column grew."""
        if width > self.content_width:
            self.content_width = width
            return True
        return False


def widen_for(columns: dict[str, TableColumn], cells: Iterable[tuple[str, Text]]) -> bool:
    """Widen ``columns`` for ``cells`` (column key, one-line text); True when one grew.

    Called for every cell of every row added (55,000 cells for 5,000 nodes), so it reads
    each text's width once and compares in line.
    """
    grew = False
    for key, text in cells:
        column = columns.get(key)
        if column is not None:
            width = text.cell_len
            if width > column.content_width:
                column.content_width, grew = width, True
    return grew


def columns_to_drop(widths: Sequence[tuple[str, int]], available: int,
                    keep: frozenset[str]) -> frozenset[str]:
    """The columns to drop so the rest fit in ``available`` cells.

    ``widths`` is every column's rendered width in priority order (most important first):
    the least important ones go first, never one in ``keep``. When even the kept columns
    do not fit, they are all that is left (the terminal cuts them; nothing else can help).
    """
    total = sum(width for _, width in widths)
    dropped: set[str] = set()
    for key, width in reversed(widths):
        if total <= available:
            break
        if key not in keep:
            dropped.add(key)
            total -= width
    return frozenset(dropped)


def fit_columns(columns: Sequence[TableColumn], priority: Sequence[str],
                keep: frozenset[str], available: int, padding: int) -> bool:
    """Drop (or bring back) ``columns`` to fit ``available`` cells; True on a change.

    Columns not named in ``priority`` are never dropped and count as kept. Nothing changes
    while ``available`` is not known yet (0: the table is not laid out).
    """
    if available <= 0:
        return False
    by_key = {column.key: column for column in columns}
    fixed = sum(column.full_width(padding) for column in columns if column.key not in priority)
    widths = [(key, by_key[key].full_width(padding)) for key in priority if key in by_key]
    drop = columns_to_drop(widths, available - fixed, keep)
    changed = False
    for key, _ in widths:
        column = by_key[key]
        if column.dropped != (key in drop):
            column.dropped = key in drop
            changed = True
    return changed


__all__ = ["TableColumn", "columns_to_drop", "fit_columns", "widen_for"]
