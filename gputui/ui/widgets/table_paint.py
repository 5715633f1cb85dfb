"""How a line table draws one row: cells padded one cell each side, styled in three layers.

The layers are those of Textual's ``DataTable``, so a table drawn here looks the same (the
snapshot tests compare the screens cell for cell): under the cell's own colours lies the
row's style (the widget's, or the header's) plus mouse metadata naming the cell (its row and
column, which clicks and hover read back); over them lies the cursor's or hover's foreground,
so the highlighted row reads in one colour. Each row ends with a stretch to the table's
width in the row's style.

Rich's ``Padding`` inside Textual's ``Styled`` draws a cell in about 0.1 ms; a screenful is
500 cells. For the one-line ``Text`` cells these tables hold, :class:`CellPainter` builds
the same segments directly from the text's own segments, which it keeps per text object
(the node list shares one ``Text`` per distinct cell); anything else (several lines, tabs, a
text wider than its column) goes through Rich as before, so the result is always Rich's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rich.console import Console, ConsoleOptions
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.renderables.styled import Styled
from textual.strip import Strip
from textual.widget import Widget

#: the component classes a line table's rows are styled with (see :meth:`RowPainter.look`)
COMPONENTS = ("line-table--header", "line-table--cursor", "line-table--hover",
              "line-table--header-hover")
#: the line table's default CSS (on its base, ``TableView``): the look of a ``DataTable``,
#: from the same theme variables
TABLE_VIEW_CSS = """
TableView {
    background: $surface;
    color: $foreground;
    height: auto;
    max-height: 100%;
    & > .line-table--header {
        text-style: bold;
        background: $panel;
        color: $foreground;
    }
    &:ansi > .line-table--header {
        background: ansi_bright_blue;
        color: ansi_default;
    }
    & > .line-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    & > .line-table--hover {
        background: $block-hover-background;
    }
    & > .line-table--header-hover {
        background: $accent 30%;
    }
    &:focus {
        background-tint: $foreground 5%;
        & > .line-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .line-table--header {
            background-tint: $foreground 5%;
        }
    }
}
"""
#: drawn rows kept (a few screenfuls: scrolling back redraws nothing)
STRIP_CACHE_SIZE = 1024
#: texts whose segments are kept (cleared when full: names are unique, the rest shared)
TEXT_CACHE_SIZE = 16384
#: a row's and a cell's metadata keys (read back by clicks and hover)
ROW, COLUMN, OUT_OF_BOUNDS = "row", "column", "out_of_bounds"


@dataclass(frozen=True)
class RowLook:
    """The styles one row is drawn with.

    ``row``: under every cell (the widget's style, or the header's); ``component``: the
    cursor's or hover's style, over ``row`` and under the cell's colours; ``post``: over
    the cell's colours (the cursor's foreground); ``extend``: the stretch after the last
    column. ``under`` and ``pad`` are derived: what lies under a cell's text, and the
    style of its padding.
    """

    row: Style
    component: Style
    post: Style
    extend: Style
    under: Style = field(init=False)
    pad: Style = field(init=False)

    def __post_init__(self) -> None:
        under = self.row + self.component
        object.__setattr__(self, "under", under)
        object.__setattr__(self, "pad", under + self.post if self.post else under)


class CellPainter:
    """Segments of padded, styled cells (see the module docstring)."""

    def __init__(self, console: Console, options: ConsoleOptions, padding: int = 1) -> None:
        self.console, self.options, self.padding = console, options, padding
        self._texts: dict[int, tuple[Text, list[tuple[str, Style | None]] | None]] = {}

    def _parts(self, text: Text) -> list[tuple[str, Style | None]] | None:
        """``text``'s segments as Rich renders a one-line text; None when Rich must draw it."""
        hit = self._texts.get(id(text))
        if hit is not None and hit[0] is text:  # id() alone could be a reused address
            return hit[1]
        parts: list[tuple[str, Style | None]] | None = None
        if "\n" not in text and "\t" not in text:
            # a Text renders as its lines joined: its own style becomes a span first
            joined = Text("\n").join([text])
            parts = [(segment.text, segment.style)
                     for segment in joined.render(self.console, end="")]
        if len(self._texts) >= TEXT_CACHE_SIZE:
            self._texts.clear()
        self._texts[id(text)] = (text, parts)
        return parts

    def paint(self, text: Text, width: int, look: RowLook, meta: Style) -> list[Segment]:
        """One cell ``width`` cells wide (padding included) in ``look``, carrying ``meta``.

        The mouse metadata is added last, over styles combined without it: Rich keeps
        those combinations (``Style.__add__`` is cached), which per-cell metadata under
        them would defeat; the result is the same, since metadata sets no colour.
        """
        inner = width - 2 * self.padding
        parts = self._parts(text)
        length = text.cell_len
        if parts is None or length > inner or inner < 0:
            return self._rich(text, width, look.row + meta + look.component, look.post)
        under, post = look.under, look.post
        pad_style = look.pad + meta
        pad = " " * self.padding
        segments = [Segment(pad, pad_style)]
        for chunk, style in parts:
            combined = under + style if style else under
            if post:
                combined = combined + post
            segments.append(Segment(chunk, combined + meta))
        if inner > length:
            segments.append(Segment(" " * (inner - length), pad_style))
        segments.append(Segment(pad, pad_style))
        return segments

    def _rich(self, text: Text, width: int, pre: Style, post: Style) -> list[Segment]:
        """Rich's drawing of a cell, for what :meth:`paint` does not build itself."""
        options = self.options.update_dimensions(width, 1).update(no_wrap=True)
        lines = self.console.render_lines(
            Styled(Padding(text, (0, self.padding)), pre_style=pre, post_style=post), options)
        return list(lines[0]) if lines else []

    def clear(self) -> None:
        """Forget every text's segments (the console's theme changed)."""
        self._texts.clear()


@lru_cache(maxsize=8192)
def cell_meta(row: int, column: int) -> Style:
    """The metadata a cell's segments carry: where a click or the mouse landed (one
    object per cell, so combining it with the same styles again is a cache hit)."""
    return Style.from_meta({ROW: row, COLUMN: column})


def paint_row(painter: CellPainter, row: int, cells: Cells, look: RowLook,
              table_width: int, widget_width: int) -> Strip:
    """Row ``row`` (-1: the header) of ``cells`` (column index, text, width), stretched
    to ``widget_width``; the strip is simplified (equal neighbouring styles merged)."""
    segments: list[Segment] = []
    for column, text, width in cells:
        if width <= 0:
            continue  # a dropped column
        segments += painter.paint(text, width, look, cell_meta(row, column))
    extend = look.extend + Style.from_meta({ROW: row, COLUMN: 0, OUT_OF_BOUNDS: True})
    segments.append(Segment(" " * max(0, widget_width - table_width), extend))
    return Strip(segments).simplify()


#: one cell to draw: column index, text, width (padding included; 0: dropped)
Cells = Sequence[tuple[int, Text, int]]


class RowPainter:
    """Draws the rows of one table widget and keeps each drawing until it is stale.

    A drawing is kept under what it shows: the caller's ``stamp`` (which row, which
    version of its cells, which column layout), its place (cells carry their row index as
    metadata) and its look. The looks come from the widget's component classes; CSS
    changes (a theme, focus) make them and every drawing stale (:meth:`clear`).
    """

    def __init__(self, widget: Widget, padding: int) -> None:
        self.widget, self.padding = widget, padding
        self._looks: dict[Hashable, RowLook] = {}
        self._strips: LRUCache[Hashable, Strip] = LRUCache(STRIP_CACHE_SIZE)
        self._cells: CellPainter | None = None

    def clear(self) -> None:
        self._looks.clear()
        self._strips.clear()

    def look(self, header: bool, cursor: bool, hover: bool) -> RowLook:
        """The styles of a row, layered as a ``DataTable`` with a row cursor layers them,
        from the component classes ``line-table--header``, ``--cursor``, ``--hover`` and
        ``--header-hover``."""
        widget = self.widget
        key = (header, cursor, hover, widget.get_pseudo_class_state())
        look = self._looks.get(key)
        if look is None:
            component = Style()
            if hover:
                component += widget.get_component_rich_style("line-table--hover")
                if header:
                    component += widget.get_component_rich_style("line-table--header-hover")
            if cursor:
                component += widget.get_component_rich_style("line-table--cursor")
            row = (widget.get_component_styles("line-table--header").rich_style if header
                   else widget.rich_style)
            # the cursor's foreground wins over a cell's colour; its background does not
            look = RowLook(row, component, Style.from_color(component.color), row + component)
            self._looks[key] = look
        return look

    def row(self, row: int, stamp: Hashable, look: RowLook, cells: Callable[[], Cells],
            table_width: int, width: int) -> Strip:
        """Row ``row`` (-1: the header) drawn whole and ``width`` wide at least; ``cells``
        is asked only when no drawing of it is kept."""
        key = (row, stamp, look, table_width, width)
        strip = self._strips.get(key)
        if strip is None:
            if self._cells is None:
                app = self.widget.app
                self._cells = CellPainter(app.console, app.console_options, self.padding)
            strip = paint_row(self._cells, row, cells(), look, table_width, width)
            self._strips[key] = strip
        return strip


__all__ = ["COLUMN", "COMPONENTS", "TABLE_VIEW_CSS", "OUT_OF_BOUNDS", "ROW", "CellPainter",
           "Cells", "RowLook", "RowPainter", "cell_meta", "paint_row"]
