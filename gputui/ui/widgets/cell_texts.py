"""``CellTexts``: styled Rich texts for table cells given as ``(text, role)``, shared by content.

Why shared: when 5,000 rows arrive at once most cells repeat (``Ready``, ``✔ ok``, ``8/8``);
one ``Text`` per distinct cell saves most of the allocation, and it is safe because a table
never mutates a cell's renderable. Roles get their style from the app's palette
(:mod:`gputui.ui.render.style` decides the role and its weight, the palette its colour).
"""

from __future__ import annotations

from collections.abc import Hashable

from rich.style import Style
from rich.text import Text

from gputui.ui.render.style import ROLES, Palette
from gputui.ui.widgets.sortable_text import SortableText

#: distinct cell texts kept for sharing (names are unique, so the cache stops growing)
TEXT_CACHE_SIZE = 4096


class CellTexts:
    """Role styles from one theme plus the shared texts made with them."""

    def __init__(self) -> None:
        self._styles: dict[str, Style] = {}
        self._texts: dict[tuple[tuple[str, str], Hashable], Text] = {}

    def restyle(self, palette: Palette) -> None:
        """Take the styles of a (new) theme's palette; texts made with the old ones are
        dropped."""
        self._styles = {role: palette.role(role) for role in ROLES}
        self._texts.clear()

    def style(self, role: str) -> Style | str:
        """The style of ``role`` (``""`` for no role)."""
        return self._styles.get(role, "")

    def text(self, cell: tuple[str, str], sort_key: Hashable = None) -> Text:
        """The styled text of ``(text, role)``, the same object for equal cells; with a
        ``sort_key``, a :class:`SortableText` carrying it (cells of sorted columns)."""
        key = (cell, sort_key)
        text = self._texts.get(key)
        if text is None:
            style = self.style(cell[1])
            text = (Text(cell[0], style=style, no_wrap=True, end="") if sort_key is None else
                    SortableText(cell[0], sort_key, style=style, no_wrap=True, end=""))
            if len(self._texts) < TEXT_CACHE_SIZE:
                self._texts[key] = text
        return text
