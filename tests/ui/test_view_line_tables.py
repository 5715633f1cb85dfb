"""The findings, time to GPU and timeline views on line tables: the keys and the mouse do
what they did on ``DataTable`` (the cursor's row tells the screen, ``enter`` and a click on
the cursor's row open it), and the cursor stays on its row's key as rows come above it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.settings import Settings
from gputui.ui.screens.findings import FindingsScreen
from gputui.ui.screens.joins import JoinsScreen, JoinsTable
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.timeline import TimelineScreen, TimelineTable
from gputui.ui.widgets.findings_table import FindingsTable
from gputui.ui.widgets.line_table import LineTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import FrozenApp, modified, settle


def _shown(widget: Any) -> str:
    return str(widget.render())


async def test_findings_the_hint_follows_the_cursor_and_a_second_click_goes_there(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-failed")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FindingsScreen) and isinstance(screen.table, LineTable)
        table, hint = screen.table, screen.query_one("#findings-hint")
        findings = [table.findings[key] for key in table.row_keys]
        assert table.selected == findings[0] and findings[0].message in _shown(hint)
        await pilot.press("down")
        await settle(pilot)
        assert table.selected == findings[1] and findings[1].message in _shown(hint)
        row = next(i for i, f in enumerate(findings) if f.node and i != table.cursor_row)
        await pilot.click(FindingsTable, offset=(2, row + 1))  # below the header
        await settle(pilot)
        assert table.cursor_row == row and app.current_mode == "findings"
        assert findings[row].message in _shown(hint)
        await pilot.click(FindingsTable, offset=(2, row + 1))  # again: go there, as enter
        await settle(pilot)
        nodes = app.screen
        assert isinstance(nodes, NodesScreen) and nodes.selected == findings[row].node


async def _joins(pilot: Any) -> JoinsScreen:
    await settle(pilot)
    await pilot.press("colon", *"joins", "enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, JoinsScreen)
    return screen


def _arrows(table: JoinsTable) -> list[str]:
    """The keys of the rows whose first cell carries the ``▶``."""
    return [key for key in table.row_keys if table.get_cell(key, "node").plain[0] == "▶"]


async def test_joins_enter_opens_the_pool_then_the_node_and_the_arrow_follows(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("staggered-joins")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _joins(pilot)
        assert screen.pools.has_focus and _arrows(screen.nodes) == []
        await pilot.press("down")
        await settle(pilot)
        pool = screen.selected_pool()
        assert pool is not None and pool.pool == screen.pools.selected
        assert set(screen.nodes.row_keys) == set(pool.nodes)  # the nodes follow the pool
        await pilot.press("enter")
        await settle(pilot)
        nodes = screen.nodes
        assert nodes.has_focus and _arrows(nodes) == [nodes.row_keys[0]]
        await pilot.press("down")
        await settle(pilot)
        second = nodes.row_keys[1]
        assert nodes.selected == second and _arrows(nodes) == [second]
        await pilot.press("escape")  # back up: no node has the keys, no arrow
        await settle(pilot)
        assert screen.pools.has_focus and _arrows(nodes) == []
        await pilot.press("enter", "enter")  # enter on a node: its pipeline, as p
        await settle(pilot)
        assert app.current_mode == "nodes" and isinstance(app.screen, NodesScreen)
        assert app.screen.table.selected_node == second
        assert app.screen.query_one("#node-detail-tabs").active == "pipeline"  # type: ignore[attr-defined]


async def test_joins_a_second_click_opens_the_pool_then_the_node(frozen_app: FrozenApp) -> None:
    app = frozen_app("staggered-joins")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _joins(pilot)
        pools = screen.pools
        await pilot.click("#joins-pools", offset=(2, 2))  # the second pool
        await settle(pilot)
        assert pools.cursor_row == 1 and pools.has_focus and not screen.nodes.has_focus
        pool = screen.selected_pool()
        assert pool is not None and set(screen.nodes.row_keys) == set(pool.nodes)
        await pilot.click("#joins-pools", offset=(2, 2))
        await settle(pilot)
        assert screen.nodes.has_focus
        node = screen.nodes.row_keys[2]
        for _ in range(2):
            await pilot.click("#joins-nodes", offset=(4, 3))
            await settle(pilot)
        assert app.current_mode == "nodes" and isinstance(app.screen, NodesScreen)
        assert app.screen.table.selected_node == node


async def test_timeline_the_cursor_stays_on_its_event_as_newer_ones_come_above(
        frozen_app: FrozenApp, tmp_path: Path) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    names = sorted(recording.objects.nodes)
    app = frozen_app("driver-crashloop", settings=Settings(audit_log=str(tmp_path / "a.jsonl")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        source = app.source
        assert isinstance(source, ReplaySource)
        source.push(modified(recording, cordon=(names[0], names[1])))
        await settle(pilot)
        await pilot.press("colon", *"timeline", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        table, detail = screen.table, screen.query_one("#timeline-detail")
        assert isinstance(table, TimelineTable) and table.row_count == 2
        await pilot.press("down")
        await settle(pilot)
        event = screen.selected
        assert event is not None and table.cursor_row == 1
        assert _shown(detail) == f"{event.node}: {event.text}"
        source.push(modified(recording, cordon=(names[0], names[1]), remove=(names[2],)))
        await settle(pilot)
        assert table.row_count == 3 and screen.selected == event and table.cursor_row == 2
        assert _shown(detail) == f"{event.node}: {event.text}"
        await pilot.press("up")
        await settle(pilot)
        assert screen.selected != event and _shown(detail) != f"{event.node}: {event.text}"
