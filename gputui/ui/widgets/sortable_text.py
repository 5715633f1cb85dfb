"""``SortableText``: a table cell's text plus the value its column sorts by.

In a module of its own because both the keyed table and the DataTable internals (which
measure it like a plain ``Text``) need it.
"""

from __future__ import annotations

from collections.abc import Hashable

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
