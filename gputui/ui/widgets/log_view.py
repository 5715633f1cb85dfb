"""``LogView``: a container's log lines that wrap to the pane (by default) and can be searched.

Why not Textual's ``Log``: it never wraps, so at 80 columns the line that says what broke
("Unable to locate package linux-headers-5.15.0-…") took 17 presses of ``→`` to read. This
keeps the raw lines and lays them out for the current width (again on resize and when
wrapping is toggled), draws only the visible rows (``render_line``, as Toolong does), and
finds text in the raw lines: a match scrolls its first row into view and is highlighted.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

#: how a search match is drawn (reverse video reads in every theme and with NO_COLOR)
MATCH_STYLE = Style(reverse=True)


class LogView(ScrollView, can_focus=True):
    """Log lines, newest at the bottom; ``wrap`` folds long lines to the pane's width."""

    DEFAULT_CSS = """
    LogView { background: $surface; overflow-y: auto; overflow-x: auto;
              scrollbar-gutter: stable; }
    """

    def __init__(self, *, wrap: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.wrap = wrap
        self.raw: tuple[str, ...] = ()
        self.query_text = ""
        self.matches: tuple[int, ...] = ()
        self.match_index = -1
        self._strips: list[Strip] = []
        self._starts: list[int] = []
        self._laid_width = -1
        #: scroll to the newest line once laid out (lines can arrive before the pane has a size)
        self._to_end = False

    # --- content ----------------------------------------------------------------------

    def set_lines(self, lines: Sequence[str]) -> None:
        """Show ``lines`` (replacing what was shown) and scroll to the newest."""
        self.raw = tuple(lines)
        self.matches, self.match_index = self._find(self.query_text), -1
        self._to_end = True
        self._lay_out(force=True)

    def set_wrap(self, wrap: bool) -> None:
        """Wrap long lines or let them run off to the right; keeps the line at the top."""
        top = self.raw_line_at(round(self.scroll_y))
        self.wrap = wrap
        self._lay_out(force=True)
        self.scroll_to(x=0, y=self._starts[top] if top < len(self._starts) else 0,
                       animate=False, immediate=True)

    def raw_line_at(self, row: int) -> int:
        """The raw line index laid out on display row ``row``."""
        index = 0
        for number, start in enumerate(self._starts):
            if start > row:
                break
            index = number
        return index

    def row_of(self, line: int) -> int:
        """The first display row of raw line ``line``."""
        return self._starts[line] if 0 <= line < len(self._starts) else 0

    # --- search -----------------------------------------------------------------------

    def search(self, text: str) -> int | None:
        """Highlight ``text`` (case-insensitive) and show its first match from the top row
        down, wrapping round; the raw line index, None when nothing matches."""
        self.query_text = text
        self.matches = self._find(text)
        self._lay_out(force=True)
        if not self.matches:
            self.match_index = -1
            return None
        top = self.raw_line_at(round(self.scroll_y))
        after = [i for i, line in enumerate(self.matches) if line >= top]
        self.match_index = after[0] if after else 0
        return self._show_match()

    def next_match(self) -> int | None:
        """Show the next match (wrapping round), None when there is none."""
        if not self.matches:
            return None
        self.match_index = (self.match_index + 1) % len(self.matches)
        return self._show_match()

    def _show_match(self) -> int:
        line = self.matches[self.match_index]
        self.scroll_to(y=self.row_of(line), animate=False, immediate=True)
        return line

    def _find(self, text: str) -> tuple[int, ...]:
        needle = text.lower()
        return tuple(i for i, line in enumerate(self.raw) if needle and needle in line.lower())

    # --- layout and drawing ---------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        """Lay out again for a new width; a view at the newest line stays there."""
        self._to_end = self._to_end or self.scroll_y >= self.max_scroll_y
        self._lay_out(force=True)

    def _text(self, line: str) -> Text:
        text = Text(line, no_wrap=not self.wrap, overflow="fold" if self.wrap else "ignore",
                    end="")
        if self.query_text:
            text.highlight_words([self.query_text], MATCH_STYLE, case_sensitive=False)
        return text

    def _lay_out(self, force: bool = False) -> None:
        """Turn the raw lines into display rows for the current width."""
        width = self.scrollable_content_region.width
        if width <= 0 or (not force and width == self._laid_width):
            return
        self._laid_width = width
        self.styles.overflow_x = "hidden" if self.wrap else "auto"
        strips: list[Strip] = []
        starts: list[int] = []
        console = self.app.console
        options = console.options.update(width=width, no_wrap=not self.wrap)
        widest = width
        for line in self.raw:
            starts.append(len(strips))
            text = self._text(line)
            if self.wrap:
                rows = Segment.split_lines(console.render(text, options))
                strips += [Strip(row) for row in rows] or [Strip.blank(0)]
            else:
                strips.append(Strip(list(text.render(console))))
                widest = max(widest, cell_len(line))
        self._strips, self._starts = strips, starts
        self.virtual_size = Size(width if self.wrap else widest, len(strips))
        self.refresh()
        if self._to_end:
            self._to_end = False
            # not immediate: after the refresh, once the new virtual size sets how far the
            # view may scroll (immediately it would stop at the old, empty size)
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._strips):
            return Strip.blank(width, self.rich_style)
        return self._strips[index].crop_extend(scroll_x, scroll_x + width, self.rich_style)
