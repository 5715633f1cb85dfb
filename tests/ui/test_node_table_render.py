"""The node table's rendering caches: reused across patches, never stale (Pilot, frozen data)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult

from gputui.ui.node_rows import NodeFilter, node_cells
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.conftest import FrozenApp, modified, settle


#: every test here that reads the driver column runs wide enough for all columns (a narrower
#: table drops its least important ones, see ``column_drop``)


def _line_text(table: NodeTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_cell_renders_survive_other_cells_updates_and_follow_their_own(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        first, second = table.shown_nodes[:2]
        style, width = Style(), table.columns["driver"].get_render_width(table)
        column = table.get_column_index("driver")
        before = table._render_cell(1, column, style, width)
        table.update_cell(first, "driver", Text("999.99"))
        # another row changed: the second row's cell is not rendered again
        assert table._render_cell(1, column, style, width) is before
        table.update_cell(second, "driver", Text("123.45"))
        await settle(pilot)
        assert "999.99" in _line_text(table, 1) and "123.45" in _line_text(table, 2)


async def test_a_cell_rendered_again_at_a_new_width_fills_that_width(
        frozen_app: FrozenApp) -> None:
    """Textual keys its own cell cache without the width; a grown column must not get the
    rendering made at the old width (seen live: a truncated first row after the columns grew)."""
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        column = table.get_column_index("name")
        narrow = table._render_cell(0, column, Style(), 6)
        wide = table._render_cell(0, column, Style(), 30)
        assert sum(segment.cell_length for segment in narrow[0]) == 6
        assert sum(segment.cell_length for segment in wide[0]) == 30
        assert table.get_cell(table.shown_nodes[0], "name").plain[:20] in "".join(
            segment.text for segment in wide[0])


async def test_patch_row_repaints_its_row_and_order_caches_follow_sorts(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        first = table.shown_nodes[0]
        table.patch_row(first, {"driver": Text("999.99"), "gpus": Text("7/8")})
        await settle(pilot)
        assert table.get_cell(first, "driver").plain == "999.99"
        assert "999.99" in _line_text(table, 1) and "7/8" in _line_text(table, 1)
        table.sort_by("name")
        await settle(pilot)
        assert table.shown_nodes == sorted(app.snapshot.nodes)
        assert [row.key.value for row in table.ordered_rows] == table.shown_nodes
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
        singles: list[object] = []
        table.remove_row = singles.append  # type: ignore[method-assign,assignment]
        table.set_filter(NodeFilter("a100"))
        await settle(pilot)
        assert singles == []  # three rows went in one remove_rows
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
