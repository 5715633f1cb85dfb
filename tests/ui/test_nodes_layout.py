"""At 80x24 the node list takes the rows it has and the detail pane the rest (issue 29
item 7): before, a 5-node cluster's list took half the screen, blank rows included, and the
detail pane, where the pipeline says what broke, was cut to a few lines."""

from __future__ import annotations

from gputui.ui.screens.nodes import NodesScreen
from tests.ui.conftest import FrozenApp, settle


async def test_the_list_takes_its_rows_and_the_detail_the_rest(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        table = screen.table
        rows = table.row_count
        assert 0 < rows < 8
        # its rows, the header, and at most a horizontal scrollbar: no blank rows
        assert table.region.height <= rows + 2, (table.region.height, rows)
        detail = screen.query_one("#node-detail-tabs")
        assert detail.region.height >= 24 - 4 - (rows + 2) - 1 - 2, detail.region.height


async def test_a_big_list_stops_at_half_the_screen(frozen_app: FrozenApp) -> None:
    app = frozen_app("xid-storm")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        assert screen.table.region.height <= 12
