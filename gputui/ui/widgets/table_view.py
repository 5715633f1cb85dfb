"""``TableView``: keyed rows shown through Textual's line API, only those on screen drawn.

The base of :class:`~gputui.ui.widgets.line_table.LineTable` (which adds the keys and the
mouse): the rows (:class:`~gputui.ui.widgets.table_rows.KeyedRows`), their columns and
widths, the row cursor and its scrolling, and the drawing. ``render_line`` draws the header
on the first line and the rows from the scroll position below it; each row's drawing is
kept (:class:`~gputui.ui.widgets.table_paint.RowPainter`) until its cells, place, column
layout or look change, so a frame costs the rows that changed on screen, and a patch the
rows it touches. :meth:`TableView.bulk` sizes and redraws many changes once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size, Spacing
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gputui.ui.widgets.sortable_text import same_cell, sort_key
from gputui.ui.widgets.table_columns import TableColumn, fit_columns
from gputui.ui.widgets.table_paint import COMPONENTS, TABLE_VIEW_CSS, Cells, RowPainter
from gputui.ui.widgets.table_rows import KeyedRows

#: the header's row number (rows count from 0 below it)
HEADER = -1


class TableView(ScrollView, can_focus=True):
    """Keyed rows drawn line by line (see the module docstring).

    ``sort_columns``: the columns rows are ordered by, first decides (empty: the order
    rows came in); ``sort_reverse`` flips it. ``drop_order`` names the columns that may
    give way to a narrow terminal, most important first; ``always_shown`` those that never
    do.
    """

    DEFAULT_CSS = TABLE_VIEW_CSS
    COMPONENT_CLASSES: ClassVar[set[str]] = set(COMPONENTS)

    drop_order: tuple[str, ...] = ()
    always_shown: frozenset[str] = frozenset()
    #: cells of padding on each side of a column
    cell_padding = 1

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows = KeyedRows()
        self.sort_columns: tuple[str, ...] = ()
        self.sort_reverse = False
        self._cursor = 0
        self._hover: int | None = None  # the row under the mouse (HEADER: the header)
        self._header_stamp = 0
        self._layout = 0  # changes when a column's width or presence does
        self._painter = RowPainter(self, self.cell_padding)
        self._scroll_after_layout = False
        self._bulk = 0
        self._frame_style: Style | None = None  # the widget's style, read once per frame
        self._deferred: bool | None = None  # in a bulk change: None, or whether a column grew

    # ------------------------------------------------------------------ columns
    @property
    def columns(self) -> Mapping[str, TableColumn]:
        """Column key -> column, left to right."""
        return self.rows.columns

    @property
    def ordered_columns(self) -> list[TableColumn]:
        return list(self.rows.columns.values())

    @property
    def dropped(self) -> list[str]:
        """The keys of the columns dropped now, left to right."""
        return [column.key for column in self.rows.columns.values() if column.dropped]

    def add_column(self, key: str, label: str | Text, width: int | None = None) -> None:
        """Add a column (before any row); ``width``: a fixed content width."""
        text = Text(label) if isinstance(label, str) else label
        self.rows.add_column(TableColumn(key, text, width))
        self._header_stamp += 1
        self._columns_changed()

    def set_label(self, key: str, label: Text) -> None:
        """Relabel column ``key`` (a sort arrow); the column widens to show it whole."""
        column = self.rows.columns[key]
        column.label = label
        self._header_stamp += 1
        if column.widen(label.cell_len):
            self._columns_changed()
        else:
            self.refresh_line(self.scroll_offset.y)  # the header is the first line shown

    def columns_fitted(self) -> None:
        """The set of dropped columns changed (a subclass tells its screen)."""

    def _columns_changed(self) -> None:
        """A column came or grew: drop what no longer fits, size the view, redraw."""
        self._layout += 1
        self._fit_columns()
        self._size_to_rows()
        self.refresh()

    def _fit_columns(self) -> None:
        available = self.scrollable_content_region.width
        if fit_columns(self.ordered_columns, self.drop_order, self.always_shown, available,
                       self.cell_padding):
            self._layout += 1
            self._size_to_rows()
            self.refresh()
            self.columns_fitted()

    def on_resize(self) -> None:
        self._fit_columns()

    @property
    def table_width(self) -> int:
        """The cells the shown columns take."""
        return sum(column.render_width(self.cell_padding) for column in self.ordered_columns)

    def _size_to_rows(self) -> None:
        size = Size(self.table_width, len(self.rows) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
            self._scroll_after_layout = True

    # ------------------------------------------------------------------ rows
    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def row_keys(self) -> Sequence[str]:
        """Row keys, top to bottom."""
        return self.rows.keys

    def has_row(self, key: str) -> bool:
        return key in self.rows

    def get_cell(self, key: str, column: str) -> Text:
        """The cell of row ``key`` in ``column`` (KeyError when either is not there)."""
        return self.rows.cells(key)[column]

    def get_row(self, key: str) -> list[Text]:
        """Row ``key``'s cells, left to right."""
        return list(self.rows.cells(key).values())

    def get_row_at(self, index: int) -> list[Text]:
        key = self.rows.key_at(index)
        if key is None:
            raise IndexError(f"no row {index}")
        return self.get_row(key)

    def get_row_index(self, key: str) -> int:
        """Row ``key``'s place, top to bottom (KeyError when it is not shown)."""
        index = self.rows.index(key)
        if index is None:
            raise KeyError(key)
        return index

    def put_row(self, key: str, cells: Mapping[str, Text]) -> bool:
        """Add row ``key``, or write those of ``cells`` that changed (see
        :func:`~gputui.ui.widgets.sortable_text.same_cell`).

        A new row needs a cell for every column; it goes last (sort it in with
        :meth:`sort_rows`). Returns True when the row may have moved: it is new, or the key
        of one of :attr:`sort_columns` changed.
        """
        if key not in self.rows:
            self.add_row(key, cells)
            return True
        old = self.rows.cells(key)
        changed = {column: new for column, new in cells.items()
                   if not same_cell(old[column], new)}
        if not changed:
            return False
        moved = any(sort_key(old[column]) != sort_key(new) for column, new in changed.items()
                    if column in self.sort_columns)
        self.write_cells(key, changed)
        return moved

    def add_row(self, key: str, cells: Mapping[str, Text], measured: Collection[str] = ()) -> None:
        """Append row ``key`` (a cell for every column); ``measured``: columns whose cells
        were in the table before, so fit it already (columns only grow)."""
        grew = self.rows.add(key, cells, measured)
        self._rows_changed(grew, len(self.rows) - 1)

    def write_cells(self, key: str, cells: Mapping[str, Text]) -> None:
        """Replace some cells of row ``key``; only that row is drawn again, if shown."""
        self._rows_changed(self.rows.write(key, cells), self.rows.index(key))

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Rows added, written and dropped inside are sized and drawn once, at the end
        (a slice of a fill otherwise resized the view once per row added)."""
        self._bulk += 1
        try:
            yield
        finally:
            self._bulk -= 1
            if not self._bulk and self._deferred is not None:
                grew, self._deferred = self._deferred, None
                self._rows_changed(grew, None)

    def _rows_changed(self, grew: bool, index: int | None) -> None:
        """After a change to row ``index`` (None: to several): fit the columns when one
        grew, size the view to the rows, draw what changed; inside :meth:`bulk`, all of
        that once at its end."""
        if self._bulk:
            self._deferred = grew or bool(self._deferred)
        elif grew:
            self._columns_changed()
        else:
            self._size_to_rows()
            if index is None:
                self.refresh()
            elif self._on_screen(index):
                self.refresh_line(index + 1)

    def drop_rows(self, keys: Collection[str]) -> None:
        """Remove the rows ``keys`` (those not shown are ignored), re-indexing once."""
        if not self.rows.drop(keys):
            return
        self._rows_changed(False, None)
        if self.rows and self._cursor >= len(self.rows):
            self._set_cursor(len(self.rows) - 1, False)

    def show_rows(self, rows: Mapping[str, Mapping[str, Text]]) -> None:
        """Patch the table to exactly ``rows`` (key -> column -> cell) and sort it, sized
        and drawn once; the caller puts the cursor back (:meth:`move_to_key`), since
        tables differ on where it goes when its row went."""
        with self.bulk():
            self.drop_rows([key for key in self.rows if key not in rows])
            for key, cells in rows.items():
                self.put_row(key, cells)
            self.sort_rows()

    def sort_rows(self) -> None:
        """Order the rows by the keys their :attr:`sort_columns` cells carry."""
        if self.sort_columns:
            self.rows.sort_by_keys(self.sort_columns, self.sort_reverse)
            self.refresh()

    def visible_keys(self) -> list[str]:
        """The keys of the rows scrolled into view, top to bottom."""
        top = int(self.scroll_y)
        end = min(len(self.rows), top + self._rows_in_view())
        return list(self.rows.keys[top:end])

    def _on_screen(self, index: int) -> bool:
        top = int(self.scroll_y)
        return top <= index < top + self._rows_in_view()

    def _rows_in_view(self) -> int:
        """How many rows the view shows below the header (scroll bars take their lines)."""
        return max(1, self.scrollable_content_region.height - 1)

    # ------------------------------------------------------------------ cursor
    @property
    def cursor_row(self) -> int:
        """The cursor's row, top to bottom (0 on an empty table)."""
        return self._cursor

    @property
    def current_key(self) -> str | None:
        """Key of the row under the cursor; None on an empty table."""
        return self.rows.key_at(self._cursor)

    def cursor_moved(self) -> None:
        """The cursor went to another row (a subclass tells its screen)."""

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        """Put the cursor on row ``row`` (clamped to the rows). The view follows a cursor
        that moved; ``scroll`` brings one that did not into view too."""
        if not self._set_cursor(row, animate) and scroll:
            self._scroll_to_cursor(animate)

    def move_to_key(self, key: str | None, *, force: bool = False) -> bool:
        """Put the cursor on row ``key``; False when that row is not shown.

        The view follows a cursor that moved. A cursor already on the row stays put (a
        re-sort must not announce a move) unless ``force``: a jump scrolls the row into
        view and announces it again.
        """
        index = None if key is None else self.rows.index(key)
        if index is None:
            return False
        if self._set_cursor(index, False) or not force:
            return True
        self._scroll_to_cursor(False)
        self.cursor_moved()
        return True

    def _set_cursor(self, row: int, animate: bool) -> bool:
        """Move the cursor (clamped) and the view with it; True, and the hook told, when
        it moved."""
        row = max(0, min(row, len(self.rows) - 1))
        if row == self._cursor:
            return False
        old, self._cursor = self._cursor, row
        self.refresh_line(old + 1)
        self.refresh_line(row + 1)
        self._scroll_to_cursor(animate)
        self.cursor_moved()
        return True

    def _scroll_to_cursor(self, animate: bool) -> None:
        """Scroll so the cursor's row is in view below the header; again after the next
        layout when the row count just changed (the view's height follows it then)."""
        region = Region(int(self.scroll_x), self._cursor + 1, max(1, self.size.width), 1)
        self.scroll_to_region(region, animate=animate, spacing=Spacing(top=1), force=True)
        if self._scroll_after_layout:
            self._scroll_after_layout = False
            self.call_after_refresh(self._scroll_to_cursor, False)

    # ------------------------------------------------------------------ drawing
    def notify_style_update(self) -> None:
        """CSS changed (theme, focus): every drawing made with the old styles is stale."""
        super().notify_style_update()
        self._painter.clear()

    def render_lines(self, crop: Region) -> list[Strip]:
        """A frame's lines; the widget's style is read once for all of them."""
        self._frame_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._frame_style = None

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the widget: the header, then the rows from the scroll position."""
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        base = self.rich_style if self._frame_style is None else self._frame_style
        row = HEADER if y == 0 else y - 1 + scroll_y
        if row >= len(self.rows):
            return Strip.blank(width, base)
        key = self.rows.key_at(row)
        look = self._painter.look(row == HEADER, row == self._cursor and key is not None,
                                  row == self._hover)
        stamp = (key, self._header_stamp if key is None else self.rows.stamp(key), self._layout)
        strip = self._painter.row(row, stamp, look, lambda: self._cells(key), self.table_width,
                                  width)
        shown = strip.crop(scroll_x, scroll_x + width).adjust_cell_length(width, base)
        return strip if shown is strip else shown.simplify()  # the kept one is simplified

    def _cells(self, key: str | None) -> Cells:
        """What row ``key`` (None: the header) shows, column by column."""
        columns = self.rows.columns.values()
        texts = ([column.label for column in columns] if key is None
                 else self.rows.cells(key).values())
        return [(index, text, column.render_width(self.cell_padding))
                for index, (column, text) in enumerate(zip(columns, texts))]

__all__ = ["HEADER", "TableView"]
