"""The panes inside the real app, on recorded scenarios (JOURNEYS.md 1, 2 and 5).

``make_app`` with a replay source and the recording's ``now`` as the clock: the same path
the CLI takes, minus the cluster. These check that the shell and the panes meet where the
contract says (tabs, modes, jumps, pod logs), not the rendering details the other tests pin.
"""

from __future__ import annotations

from gputui.session import session_of
from gputui.settings import Settings
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.pipeline import PipelinePane
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording

A100_BROKEN = "gke-prod-a100-pool-2b9c-qvzd"


def _app(scenario: str) -> GpuTuiApp:
    recording = load_recording(scenario, SCENARIOS)
    return make_app(Settings(), session_of(Settings(), ReplaySource.from_recording(recording), clock=lambda: recording.now))


async def test_journey_1_pipeline_break_and_driver_log() -> None:
    app = _app("driver-crashloop")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.commands.jump_to(A100_BROKEN, "pipeline")
        await pilot.pause()
        await pilot.pause()
        pane = app.screen.query_one(PipelinePane)
        assert pane.cursor == "driver" and pane.has_focus
        await pilot.press("l")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PodLogScreen)
        driver = app.snapshot.nodes[A100_BROKEN].pipeline.stage("driver")
        assert driver is not None and driver.pod
        assert (screen.pod, screen.container) == (driver.pod, "k8s-driver-manager")
        assert screen.result is not None
        assert "driver is in use" in screen.result.lines[-1]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one(PipelinePane).cursor == "driver"


async def test_journey_2_upgrades_view_and_enter_jumps_to_pipeline() -> None:
    app = _app("upgrade-failed")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, UpgradesScreen)
        failed = app.snapshot.upgrade.lanes["upgrade-failed"][0]
        screen.show_node(failed)
        await pilot.pause()
        assert screen.lanes.current_node == failed
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        pane = app.screen.query_one(PipelinePane)
        assert pane.node is not None and pane.node.name == failed


async def test_journey_5_mig_view_lists_the_failed_nodes() -> None:
    app = _app("mig-reconfig-failed")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MigScreen)
        failed = [n for n, v in app.snapshot.mig.nodes.items() if v.state == "failed"]
        assert failed
        screen.show_node(failed[0])
        assert screen.layout_widget.cursor == failed[0]
