"""A node list covered by the ``:`` prompt (or a dialog) stops filling until it is shown
again: each slice of rows drew the covered screen anew, and the keys typed at the prompt
waited for those frames (1-2 s at 5,000 nodes)."""

from __future__ import annotations

from textual.widgets import Input

from gputui.ui.node_rows import NodeFilter
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.conftest import FrozenApp, modified, settle
from tests.ui.helpers import quiet_for, until


async def test_a_covered_list_waits_and_fills_once_shown_again(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        nodes_screen = app.screen
        table = nodes_screen.query_one(NodeTable)
        template = min(app.snapshot.nodes)
        bigger = modified(recording, add={f"gke-extra-{i:02}": template for i in range(40)})
        total = len(bigger.nodes)
        table.set_filter(NodeFilter(text="no-such-node"))  # empty the table
        await settle(pilot)
        table.node_filter = NodeFilter()
        table.patch_slice = 1
        app.snapshot = bigger  # what the screen is handed again when it is shown again
        nodes_screen.show_snapshot(bigger, recording.now)  # a first fill, one row a turn
        await pilot.press("colon")  # the prompt covers the list mid-fill
        await until(pilot, lambda: isinstance(app.focused, Input))
        covered = table.row_count
        assert covered < total
        await quiet_for(pilot, 0.3)  # window: a covered list adds no rows meanwhile
        assert table.row_count == covered
        await pilot.press("escape")
        await until(pilot, lambda: table.row_count == total and not table.filling, timeout=5,
                    why=lambda: f"{table.row_count}/{total} filling={table.filling} queue={len(table._queue)} queued={table._slice_queued} top={app.screen}")
