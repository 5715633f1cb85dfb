"""``SortableText``: a table cell's text plus the value its column sorts by.

In a module of its own (no Textual import) because the line table's row store
(:mod:`~gputui.ui.widgets.table_rows`), the tables that fill it and the node list's shared
cell texts all need it, with :func:`sort_key` and :func:`same_cell`, which read it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from rich.style import Style
from rich.text import Text


class SortableText(Text):
    """Text shown in a table cell plus ``sort_key``, the value its column sorts by.

    The key must be hashable (tables share one cell object per distinct text, style and
    key) and comparable with the keys of the other cells of its column.
    """

    __slots__ = ("sort_key",)

    def __init__(self, text: str, sort_key: Hashable, *, style: str | Style = "",
                 no_wrap: bool | None = None, end: str = "\n") -> None:
        super().__init__(text, style=style, no_wrap=no_wrap, end=end)
        self.sort_key = sort_key


def sort_key(cell: object) -> Any:
    """The sort key ``cell`` carries; TypeError for a cell that carries none."""
    if not isinstance(cell, SortableText):
        raise TypeError(f"a sorted column holds a cell without a sort key: {cell!r}")
    return cell.sort_key


def _carried(cell: Text) -> Hashable:
    return cell.sort_key if isinstance(cell, SortableText) else None


def same_cell(old: Text, new: Text) -> bool:
    """Whether ``new`` shows and sorts exactly as ``old`` (then it need not be written).

    ``Text.__eq__`` compares only the characters and spans, so a cell whose colour alone
    changed (after a theme change) would be skipped; the sort key is compared too, since a
    cell showing the same text may sort elsewhere (``"—"`` for another reason).
    """
    if old is new:
        return True
    return (old == new and old.style == new.style  # == is characters and spans
            and old.justify == new.justify and old.no_wrap == new.no_wrap
            and old.overflow == new.overflow and old.end == new.end
            and _carried(old) == _carried(new))
