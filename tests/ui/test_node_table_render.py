"""The node table's drawing: kept across patches, never stale (Pilot, frozen data)."""

from __future__ import annotations

from collections.abc import Collection

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from gputui.ui.node_rows import NodeFilter, node_cells
from gputui.ui.widgets import table_paint
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.conftest import FrozenApp, modified, settle


#: every test here that reads the driver column runs wide enough for all columns (a narrower
#: table drops its least important ones, see ``table_columns``)


def _line_text(table: NodeTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_a_patch_redraws_its_own_row_and_reuses_the_others(
        frozen_app: FrozenApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame draws only the rows on screen, and of those only the rows whose cells,
    place or look changed; the rest are the drawings kept from the frame before."""
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        first, second = table.shown_nodes[:2]
        drawn: list[int] = []
        real = table_paint.paint_row

        def counted(painter, row, *args):  # type: ignore[no-untyped-def]
            drawn.append(row)
            return real(painter, row, *args)

        monkeypatch.setattr(table_paint, "paint_row", counted)
        lines = [_line_text(table, y) for y in range(table.row_count + 1)]
        assert drawn == []  # every row's drawing was kept
        table.write_cells(second, {"driver": Text("999.99")})
        assert "999.99" in _line_text(table, 2) and drawn == [1]
        assert [_line_text(table, y) for y in (0, 1, 3)] == [lines[0], lines[1], lines[3]]
        assert drawn == [1]
        table.write_cells(first, {"driver": Text("123.45")})
        await settle(pilot)
        assert "123.45" in _line_text(table, 1) and "999.99" in _line_text(table, 2)


async def test_a_wider_cell_widens_its_column_on_every_row(frozen_app: FrozenApp) -> None:
    """Columns are as wide as their widest cell: one long cell moves the column after it
    on every row and in the header at once, and is never cut."""
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        before = _line_text(table, 0).index("GPU ")
        width = table.columns["driver"].content_width
        wide = "535.104.05-" + "x" * width
        table.write_cells(table.shown_nodes[0], {"driver": Text(wide)})
        await settle(pilot)
        after = _line_text(table, 0).index("GPU ")
        assert after == before + len(wide) - width
        assert wide in _line_text(table, 1)
        for y, name in enumerate(table.shown_nodes, start=1):  # the GPU column lines up
            assert _line_text(table, y).index(table.get_cell(name, "product").plain) == after


async def test_a_patched_row_keeps_its_cells_across_a_sort(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        first = table.shown_nodes[0]
        table.write_cells(first, {"driver": Text("999.99"), "gpus": Text("7/8")})
        await settle(pilot)
        assert table.get_cell(first, "driver").plain == "999.99"
        assert "999.99" in _line_text(table, 1) and "7/8" in _line_text(table, 1)
        table.sort_by("name")
        await settle(pilot)
        assert table.shown_nodes == sorted(app.snapshot.nodes)
        row = table.shown_nodes.index(first)
        assert "999.99" in _line_text(table, row + 1)


async def test_partial_patch_superseded_by_newer_snapshot_ends_equal_to_newest(
        frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        table.patch_slice = 1  # one row per event-loop turn
        names = sorted(app.snapshot.nodes)
        older = modified(recording, cordon=tuple(names[:4]))
        newest = modified(recording, cordon=tuple(names[1:3]), remove=(names[4],))
        table.show_snapshot(older, recording.now)
        assert table._queue
        table.show_snapshot(newest, recording.now)  # before the older patch finished
        await settle(pilot)
        assert not table._queue
        assert sorted(table.shown_nodes) == sorted(newest.nodes)
        for name, view in newest.nodes.items():
            cells = node_cells(view)
            assert [table.get_cell(name, key).plain for key in cells] == \
                [text for text, _ in cells.values()], name


async def test_filter_removes_many_rows_in_one_reindex_keeping_cursor_and_marks(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        a100 = [name for name in table.shown_nodes if "a100" in name]
        table.select_node(a100[-1])
        table.toggle_mark(a100[0])
        order = table.shown_nodes
        drops: list[list[str]] = []
        drop = table.rows.drop

        def spied(keys: Collection[str]) -> int:
            drops.append(sorted(keys))
            return drop(keys)

        table.rows.drop = spied  # type: ignore[method-assign]
        table.set_filter(NodeFilter("a100"))
        await settle(pilot)
        assert drops == [sorted(set(order) - set(a100))]  # three rows went in one re-index
        assert table.shown_nodes == [name for name in order if name in a100]
        assert table.selected_node == a100[-1] and table.marks == {a100[0]}
        assert [table.get_row_index(name) for name in table.shown_nodes] == [0, 1]
        assert "a100" in _line_text(table, 1) and "a100" in _line_text(table, 2)


async def test_the_view_line_says_rows_are_being_added_during_a_first_fill(
        frozen_app: FrozenApp) -> None:
    """Mid-fill the row count is how far the fill got, not a filter: "3/7 nodes" would read
    as four nodes hidden. The line says rows are being added, then counts them."""
    from textual.widgets import Static

    recording = load_recording("driver-crashloop", SCENARIOS)
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 14)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        line = app.screen.query_one("#node-view-line", Static)
        template = min(app.snapshot.nodes)
        bigger = modified(recording, add={f"gke-extra-{i:02}": template for i in range(40)})
        total = len(bigger.nodes)
        table.set_filter(NodeFilter(text="no-such-node"))  # empty the table
        await settle(pilot)
        assert table.row_count == 0
        table.node_filter = NodeFilter()
        table.patch_slice = 1
        shown: list[str] = []
        update = line.update
        line.update = lambda content="", **kw: (  # type: ignore[method-assign]
            shown.append(str(content)), update(content, **kw))[1]
        app.screen.show_snapshot(bigger, recording.now)  # a first fill: a screenful, then
        assert table.filling and 0 < table.row_count < total  # one row per loop turn
        table.post_message(NodeTable.ViewChanged())  # the line is redrawn mid-fill
        await settle(pilot)
        assert not table.filling and f"{total}/{total} nodes" in str(line.render())
        assert any("adding rows…" in text for text in shown)
        assert not any(text.startswith(tuple(f"{n}/{total}" for n in range(1, total)))
                       for text in shown)


class _OneTableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield NodeTable()


async def test_a_small_cluster_painted_before_any_idle_shows_whole_names() -> None:
    """A cluster smaller than one patch slice is added in one go (no first fill in slices);
    a loaded machine may paint it before the table's idle measures the columns. That paint
    showed ``gke-  Ready  8/8`` on every row (CI, first paint at 80x24 under load), so the
    columns are measured as the rows are added, with no idle in between."""
    recording = load_recording("driver-crashloop", SCENARIOS)
    snapshot = modified(recording)
    app = _OneTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.query_one(NodeTable)
        assert len(snapshot.nodes) <= table.patch_slice
        table.show_snapshot(snapshot, recording.now)  # no await: no idle has run
        longest = max(map(len, snapshot.nodes))
        assert table.columns["name"].content_width >= longest  # type: ignore[index]
        # the cursor's row starts with its ▶ (the mark column), then the name
        names = [_line_text(table, y).replace("▶", " ").split()[0]
                 for y in range(1, len(snapshot.nodes) + 1)]
        assert sorted(names) == sorted(snapshot.nodes)
