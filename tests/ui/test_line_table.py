"""The line table: keyed rows patched cell by cell, sorted by carried keys, a cursor that
follows its key, columns that give way, and only the rows on screen drawn, as a DataTable
draws them."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from gputui.ui.widgets import table_paint
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.sortable_text import SortableText
from gputui.ui.widgets.table_columns import TableColumn, fit_columns
from gputui.ui.widgets.table_paint import CellPainter
from gputui.ui.widgets.table_rows import KeyedRows

COLUMNS = (("name", "NAME", None), ("state", "STATE", None), ("util", "UTIL", 6))


def row(name: str, state: str = "Ready", rank: int = 0) -> dict[str, Text]:
    """A row: the name sorts by itself, the state by ``rank``."""
    util = Text("", no_wrap=True, end="")
    util.append("█", style=Style(color="red"))
    util.append(f" {rank}%")
    return {"name": SortableText(name, name, no_wrap=True, end=""),
            "state": SortableText(state, rank, style="yellow" if rank else "",
                                  no_wrap=True, end=""),
            "util": util}


class Table(LineTable):
    drop_order = ("state", "util")
    always_shown = frozenset({"name"})

    def __init__(self) -> None:
        super().__init__(id="table")
        self.moves: list[str | None] = []
        self.headers: list[str] = []

    def on_mount(self) -> None:
        for key, label, width in COLUMNS:
            self.add_column(key, label, width)

    def cursor_moved(self) -> None:
        self.moves.append(self.current_key)

    def header_clicked(self, column: str) -> None:
        self.headers.append(column)


class TableApp(App[None]):
    CSS = "#table { height: 12; }"

    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield Table()

    def on_line_table_row_chosen(self, event: LineTable.RowChosen) -> None:
        self.chosen.append(event.key)


def text_of(table: LineTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def filled(pilot: Any, count: int) -> Table:
    table = pilot.app.query_one(Table)
    for index in range(count):
        table.put_row(f"n{index:03}", row(f"n{index:03}", rank=index % 3))
    await pilot.pause()
    return table


# ----------------------------------------------------------------------- plain data
def test_a_patch_writes_only_changed_cells_and_restamps_only_its_row() -> None:
    rows = KeyedRows()
    for key, label, width in COLUMNS:
        rows.add_column(TableColumn(key, Text(label), width))
    for name in ("a", "b", "c"):
        rows.add(name, row(name))
    stamps = {name: rows.stamp(name) for name in rows}
    rows.write("b", {"state": SortableText("NotReady", 2)})
    assert [name for name in rows if rows.stamp(name) != stamps[name]] == ["b"]
    assert rows.cells("b")["name"] is not None and rows.columns["state"].content_width == 8
    assert rows.drop(["a", "missing"]) == 1 and list(rows) == ["b", "c"]
    assert (rows.index("c"), rows.key_at(0), rows.index("a")) == (1, "b", None)


def test_columns_give_way_least_important_first_and_come_back() -> None:
    columns = [TableColumn("name", Text("NAME"), content_width=20),
               TableColumn("state", Text("STATE"), content_width=10),
               TableColumn("util", Text("UTIL"), fixed_width=6)]
    priority, keep = ("state", "util"), frozenset({"name"})
    assert not fit_columns(columns, priority, keep, 100, 1)
    assert fit_columns(columns, priority, keep, 30, 1)  # 22 + 12 + 8 = 42 > 30
    assert [c.key for c in columns if c.dropped] == ["state", "util"]
    assert fit_columns(columns, priority, keep, 35, 1)  # 22 + 12 fit; util still goes
    assert [c.key for c in columns if c.dropped] == ["util"]
    assert fit_columns(columns, priority, keep, 42, 1)
    assert not any(c.dropped for c in columns)
    assert not fit_columns(columns, priority, keep, 0, 1)  # not laid out: no change


@pytest.mark.parametrize("text", [
    Text("gke-a", no_wrap=True, end=""),
    Text("✖ crit x", style=Style(color="red", bold=True), no_wrap=True, end=""),
    Text("", style="dim", no_wrap=True, end=""),
    Text("日本x"),
    Text.assemble(("▶", "bold"), ("●", Style(color="blue"))),
    row("n", rank=42)["util"],
])
@pytest.mark.parametrize("cursor", [Style(), Style(color="white", bgcolor="blue", bold=True)])
def test_a_cell_is_drawn_exactly_as_rich_draws_it(text: Text, cursor: Style) -> None:
    """The fast path builds the segments Rich's Padding in Textual's Styled would, in any
    row's look (under the cursor: its foreground over the cell's own colours)."""
    console = Console(width=80, color_system="truecolor")
    painter = CellPainter(console, console.options)
    base, meta = Style(color="#eeeeee", bgcolor="#202020"), table_paint.cell_meta(3, 1)
    post = Style.from_color(cursor.color)
    look = table_paint.RowLook(base, cursor, post, base + cursor)
    fast = list(Segment.simplify(painter.paint(text, 12, look, meta)))
    rich = list(Segment.simplify(painter._rich(text, 12, base + meta + cursor, post)))
    assert fast == rich


# ----------------------------------------------------------------------- the widget
async def test_rows_are_patched_by_key_and_only_changed_cells_written() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 3)
        writes: list[tuple[str, list[str]]] = []
        write = table.write_cells
        table.write_cells = lambda key, cells: (  # type: ignore[method-assign]
            writes.append((key, sorted(cells))), write(key, cells))[1]
        assert not table.put_row("n001", row("n001", rank=1))  # the same cells: nothing
        table.sort_columns = ("state",)
        assert table.put_row("n001", row("n001", "NotReady", rank=2))  # its sort key moved
        assert writes == [("n001", ["state", "util"])]
        await pilot.pause()
        assert "NotReady" in text_of(table, 2)


async def test_a_sort_is_stable_ties_by_name_and_the_cursor_follows_its_key() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 9)
        table.move_to_key("n004")
        table.sort_columns = ("state",)
        table.sort_rows()  # ranks 0,1,2: rows that tie keep the order they came in
        assert list(table.row_keys) == [f"n{i:03}" for i in (0, 3, 6, 1, 4, 7, 2, 5, 8)]
        table.move_to_key("n004")
        assert table.cursor_row == 4 and table.current_key == "n004"
        table.sort_columns, table.sort_reverse = ("state", "name"), True
        table.sort_rows()
        table.move_to_key("n004")
        assert list(table.row_keys)[:3] == ["n008", "n005", "n002"]
        assert table.current_key == "n004" and table.moves[-1] == "n004"
        with pytest.raises(TypeError, match="without a sort key"):
            table.sort_columns = ("util",)
            table.sort_rows()


async def test_a_filter_drops_rows_in_one_go_and_the_cursor_stays_on_the_rows() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 10)
        table.move_cursor(row=9)
        table.drop_rows([f"n{i:03}" for i in range(10) if i % 2])
        await pilot.pause()
        assert list(table.row_keys) == ["n000", "n002", "n004", "n006", "n008"]
        assert table.cursor_row == 4 and table.current_key == "n008"
        assert [table.get_row_index(k) for k in table.row_keys] == [0, 1, 2, 3, 4]
        assert [text_of(table, y).split()[0] for y in range(1, 6)] == list(table.row_keys)
        assert text_of(table, 6).strip() == ""  # below the last row: blank


async def test_a_narrow_table_drops_columns_then_shows_them_again() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 3)
        table.put_row("n001", {"name": SortableText("n" * 70, "n001")})  # 72 + 7 + 8 > 80
        await pilot.pause()
        assert table.dropped == ["util"] and "UTIL" not in text_of(table, 0)
        assert "STATE" in text_of(table, 0) and "█" not in text_of(table, 1)
        table.put_row("n001", {"name": SortableText("n" * 75, "n001")})  # 77 + 7 > 80
        await pilot.pause()
        assert table.dropped == ["state", "util"] and "Ready" not in text_of(table, 1)
        await pilot.resize_terminal(120, 24)
        await pilot.pause()
        assert table.dropped == [] and "STATE" in text_of(table, 0)
        assert text_of(table, 1).split()[:2] == ["n000", "Ready"]


async def test_a_scrolled_window_draws_the_header_then_the_rows_in_view() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 100)
        drawn: list[int] = []
        paint = table_paint.paint_row
        table_paint.paint_row = lambda painter, index, *rest: (  # type: ignore[assignment]
            drawn.append(index), paint(painter, index, *rest))[1]
        try:
            table.move_cursor(row=50)
            await pilot.pause()
            top = int(table.scroll_y)
            assert top == 50 - (table.size.height - 2)  # the cursor on the last line
            assert text_of(table, 0).split()[:2] == ["NAME", "STATE"]
            assert [text_of(table, y).split()[0] for y in range(1, table.size.height)] == [
                f"n{i:03}" for i in range(top, 51)]
            assert table.visible_keys() == [f"n{i:03}" for i in range(top, 51)]
            assert set(drawn) <= {-1, *range(top, 51)}  # nothing off screen was drawn
        finally:
            table_paint.paint_row = paint  # type: ignore[assignment]


async def test_keys_and_clicks_move_the_cursor_and_a_second_click_chooses() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await filled(pilot, 40)
        table.focus()
        await pilot.press("down", "down", "up")
        assert table.cursor_row == 1
        await pilot.press("pagedown")
        page = table.scrollable_content_region.height - 1
        assert table.cursor_row == 1 + page
        await pilot.press("end")
        assert table.cursor_row == 39 and table.current_key in table.visible_keys()
        await pilot.press("pageup", "home")
        assert table.cursor_row == 0 and table.scroll_y == 0
        await pilot.click(Table, offset=(2, 3))
        assert table.cursor_row == 2 and app.chosen == []
        await pilot.click(Table, offset=(2, 3))
        await pilot.pause()
        assert app.chosen == ["n002"]
        await pilot.click(Table, offset=(2, 0))
        assert table.headers == ["name"] and table.cursor_row == 2


class Twins(App[None]):
    """The same rows in a DataTable and a line table, one above the other."""

    CSS = "DataTable, LineTable { height: 10; }"

    def compose(self) -> ComposeResult:
        yield DataTable(id="data", cursor_type="row", zebra_stripes=False)
        yield LineTable(id="line")


async def test_it_draws_every_line_as_a_datatable_does() -> None:
    """Segment for segment (text, colour, mouse metadata), focused or not, scrolled or
    not: the snapshots of the node list did not change when it moved to the line table."""
    app = Twins()
    async with app.run_test(size=(80, 30)) as pilot:
        data, line = app.query_one(DataTable), app.query_one(LineTable)
        for key, label, width in COLUMNS:
            data.add_column(Text(label), key=key, width=width)
            line.add_column(key, Text(label), width)
        for index in range(30):
            cells = row(f"n{index:03}", "NotReady,Cordoned" if index % 4 else "Ready", index)
            data.add_row(*cells.values(), key=str(index))
            line.put_row(str(index), cells)
        async def lines(table: DataTable[Any] | LineTable, focus: bool) -> list[Any]:
            app.set_focus(table if focus else None)
            await pilot.pause()
            return [list(table.render_line(y)) for y in range(10)]

        for cursor in (0, 20, 3):
            data.move_cursor(row=cursor)
            line.move_cursor(row=cursor)
            await pilot.pause()
            assert data.scroll_offset == line.scroll_offset
            for focus in (True, False):
                assert await lines(data, focus) == await lines(line, focus), (cursor, focus)
