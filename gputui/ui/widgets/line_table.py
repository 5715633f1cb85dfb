"""``LineTable``: a keyed, sorted table that draws only the rows on screen.

Why not Textual's ``DataTable``: at 5,000 nodes its table-wide caches made every fill,
patch, sort and filter cost seconds, and making it fast meant surgery on its private
caches. This table uses Textual's line API (``ScrollView.render_line``, as Toolong shows
millions of lines): rows are plain data (:class:`~gputui.ui.widgets.table_rows.KeyedRows`);
a frame draws the header and the rows in view, each row's drawing kept until its cells,
place or look change. A frame costs the screen, not the data; a patch, the rows it touches.

Rows are keyed, patched cell by cell (:meth:`put_row`), dropped in one go, sorted by the
keys their cells carry; the cursor follows its key; columns are as wide as their content
and give way by priority on a narrow terminal (:mod:`~gputui.ui.widgets.table_columns`).
It looks like a ``DataTable`` (:mod:`~gputui.ui.widgets.table_paint`) and touches no
private Textual.

Keys: Textual's scrolling keys (up, down, page up/down, home, end) move the cursor here,
and the view scrolls to keep the cursor in sight; left and right scroll sideways. A click
moves the cursor; a click on the cursor's row says the row was chosen (:class:`RowChosen`).
A cursor that went to another row says so (:class:`CursorMoved`) unless a subclass tells
its screen in its own words (the node list's ``NodeSelected``).
"""

from __future__ import annotations

from textual import events
from textual.message import Message

from gputui.ui.widgets.table_paint import COLUMN, OUT_OF_BOUNDS, ROW
from gputui.ui.widgets.table_view import HEADER, TableView


class LineTable(TableView):
    """A table drawn line by line that the keys and the mouse move through (see the module
    docstring)."""

    class RowChosen(Message):
        """The row under the cursor was clicked again: open it."""

        def __init__(self, table: LineTable, key: str) -> None:
            super().__init__()
            self.table, self.key = table, key

        @property
        def control(self) -> LineTable:
            return self.table

    class CursorMoved(Message):
        """The cursor went to another row, ``key`` (None: the table is empty)."""

        def __init__(self, table: LineTable, key: str | None) -> None:
            super().__init__()
            self.table, self.key = table, key

        @property
        def control(self) -> LineTable:
            return self.table

    def cursor_moved(self) -> None:
        """Tell the screen where the cursor went (a subclass may say it otherwise)."""
        self.post_message(self.CursorMoved(self, self.current_key))

    # ------------------------------------------------------------------ keys and mouse
    def _key_move(self, row: int) -> None:
        self._show_hover(None)
        self.move_cursor(row=row)

    def action_scroll_up(self) -> None:
        self._key_move(self._cursor - 1)

    def action_scroll_down(self) -> None:
        self._key_move(self._cursor + 1)

    def action_page_up(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.scroll_relative(y=-page, animate=False, force=True)
        self._key_move(self._cursor - page)

    def action_page_down(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.scroll_relative(y=page, animate=False, force=True)
        self._key_move(self._cursor + page)

    def action_scroll_home(self) -> None:
        self._key_move(0)

    def action_scroll_end(self) -> None:
        self._key_move(len(self.rows) - 1)

    def header_clicked(self, column: str) -> None:
        """Column ``column``'s header was clicked (a subclass sorts by it)."""

    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        row, column = meta.get(ROW), meta.get(COLUMN)
        if not isinstance(row, int) or not isinstance(column, int):
            return
        if row == HEADER:
            if not meta.get(OUT_OF_BOUNDS):
                self.header_clicked(self.ordered_columns[column].key)
            return
        chosen = row == self._cursor
        self.move_cursor(row=row, animate=True)
        key = self.current_key
        if chosen and key is not None:
            self.post_message(self.RowChosen(self, key))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        row = event.style.meta.get(ROW)
        self._show_hover(row if isinstance(row, int) else None)

    def on_leave(self) -> None:
        self._show_hover(None)

    def _show_hover(self, row: int | None) -> None:
        if row != self._hover:
            for old in (self._hover, row):
                if old is not None:
                    self.refresh_line(self.scroll_offset.y if old == HEADER else old + 1)
            self._hover = row


__all__ = ["LineTable"]
