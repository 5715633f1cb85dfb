"""At 80 columns the node list drops whole columns by priority, never the finding (issue 29,
item 7): before, a cordoned node's wide STATUS (``Ready,Cordoned``) pushed UTIL
and UPGRADE off the screen and cut the worst finding in the middle of its code."""

from __future__ import annotations

from gputui.ui.node_rows import ALWAYS_SHOWN, DROP_ORDER
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.table_columns import columns_to_drop
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.conftest import FrozenApp, modified, settle


def test_the_least_important_columns_go_first_and_the_kept_never() -> None:
    widths = [("name", 30), ("finding", 30), ("gpus", 6), ("status", 12), ("util", 8)]
    keep = frozenset({"name", "finding"})
    assert columns_to_drop(widths, 200, keep) == frozenset()
    assert columns_to_drop(widths, 80, keep) == {"util"}
    assert columns_to_drop(widths, 75, keep) == {"util", "status"}
    assert columns_to_drop(widths, 40, keep) == {"util", "status", "gpus"}  # kept ones stay


def _line(table: NodeTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_a_wide_status_drops_columns_not_the_finding(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        table = screen.table
        source = app.source
        source.push(modified(recording, cordon=tuple(recording.objects.nodes)))  # type: ignore[attr-defined]
        await settle(pilot)
        header = _line(table, 0)
        rows = [_line(table, y) for y in range(1, table.row_count + 1)]
        assert all("Cordoned" not in row for row in rows), rows  # STATUS dropped
        assert "STATUS" not in header and "FINDING" in header, header
        # every row's finding reads whole, as wide as the table is
        assert all(row.rstrip().endswith(("+2", "ok")) for row in rows), rows
        dropped = set(table.dropped)
        assert "status" in dropped and not dropped & ALWAYS_SHOWN
        # what goes is the tail of the priority order
        assert dropped == set(DROP_ORDER[len(DROP_ORDER) - len(dropped):]), dropped
        line = str(screen.query_one("#node-view-line").render())
        assert f"{len(dropped)} columns hidden" in line, line
        await pilot.resize_terminal(200, 30)
        await settle(pilot)
        assert table.dropped == [] and "Ready,Cordoned" in _line(table, 1)
        assert "columns hidden" not in str(screen.query_one("#node-view-line").render())
