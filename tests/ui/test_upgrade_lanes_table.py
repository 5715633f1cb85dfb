"""The upgrade lanes are a line table: rows keyed by node, patched in place, in lane order."""

from __future__ import annotations

from typing import Any

from gputui.ui.render.upgrades import lane_rows
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.sortable_text import sort_key
from tests.ui.panes.data import NOW, upgrade_node, upgrade_snapshot, upgrade_states
from tests.ui.panes.host import HostApp


async def test_upgrade_lanes_keep_their_rows_in_lane_order_carried_by_the_node_cell() -> None:
    """A node that moves lane keeps its row (patched, not dropped and added again) and the
    rows follow the lanes' order, which the node cells carry (headings included)."""
    screen = UpgradesScreen()
    app = HostApp(upgrade_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lanes = screen.lanes
        assert isinstance(lanes, LineTable)  # draws the rows on screen only
        moved = upgrade_node(1)
        states = upgrade_states()
        states[moved] = "pod-deletion-required"
        snapshot = upgrade_snapshot(states)
        calls: list[tuple[str, Any]] = []
        for name in ("add_row", "drop_rows"):
            method = getattr(lanes, name)

            def record(*args: Any, _name: str = name, _method: Any = method) -> Any:
                calls.append((_name, args[0]))
                return _method(*args)
            setattr(lanes, name, record)
        app.deliver(snapshot)
        await pilot.pause()
        rows = lane_rows(snapshot.upgrade, NOW)
        assert list(lanes.row_keys) == [row.key for row in rows]
        assert [sort_key(lanes.get_cell(row.key, "node")) for row in rows] == sorted(
            row.order for row in rows)
        dropped = {key for name, keys in calls if name == "drop_rows" for key in keys}
        added = {key for name, key in calls if name == "add_row"}
        assert moved in lanes.row_keys and moved not in dropped | added


async def test_enter_on_a_node_row_opens_its_pipeline_and_on_a_heading_says_why() -> None:
    screen = UpgradesScreen()
    app = HostApp(upgrade_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lanes = screen.lanes
        lanes.focus()
        lanes.move_cursor(row=0)  # the first lane's heading
        await pilot.pause()
        assert lanes.current_node is None
        await pilot.press("enter")
        await pilot.pause()
        assert any("lane heading" in str(n.message) for n in app._notifications)
        lanes.move_cursor(row=1)
        await pilot.pause()
        node = lanes.current_node
        assert node is not None
        await pilot.press("enter")
        await pilot.pause()
        assert app.jumps and app.jumps[-1][0] == node
