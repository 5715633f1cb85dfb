"""Pilot tests: the panes' keys, the intents they post, and cursors that survive refreshes."""

from __future__ import annotations

from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.metrics_pane import MetricsPane
from gputui.ui.widgets.node_detail import NodeDetail
from gputui.ui.widgets.pipeline import PipelinePane
from tests.ui.helpers import shown
from tests.ui.panes.data import (
    BROKEN,
    HEALTHY,
    NOW,
    NS,
    mig_snapshot,
    pipeline_snapshot,
    upgrade_node,
    upgrade_snapshot,
    upgrade_states,
)
from tests.ui.panes.host import FakeSource, HostApp

DRIVER_POD = "nvidia-driver-daemonset-8x7kq"


CRASH = "Could not unload NVIDIA driver kernel modules, driver is in use"


def _source(fail: str = "") -> FakeSource:
    return FakeSource({(DRIVER_POD, "k8s-driver-manager"): ["loading modules", CRASH]},
                      [{"type": "Warning", "reason": "BackOff", "count": 14,
                        "message": "Back-off restarting failed container",
                        "lastTimestamp": "2025-11-29T09:58:00Z"}], fail=fail)


async def test_pipeline_cursor_starts_at_the_break_and_moves_between_stages() -> None:
    pane = PipelinePane(id="detail-pipeline")
    app = HostApp(pipeline_snapshot(), widget=pane, node=BROKEN)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pane.focus()
        assert pane.cursor == "driver"
        await pilot.press("down", "down")
        assert pane.cursor == "operator-validator"
        await pilot.press("up")
        assert pane.cursor == "container-toolkit"
        await pilot.press("up", "up", "up")
        assert pane.cursor == "driver"
        # a refresh keeps the cursor on the operand, not the row
        await pilot.press("down")
        app.deliver(pipeline_snapshot())
        await pilot.pause()
        assert pane.cursor == "container-toolkit"


async def test_l_opens_the_stage_pod_log_with_known_lines_and_esc_closes_it() -> None:
    pane = PipelinePane(id="detail-pipeline")
    source = _source()
    app = HostApp(pipeline_snapshot(), widget=pane, node=BROKEN, source=source)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pane.focus()
        await pilot.press("l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PodLogScreen)
        assert app.log_requests == [(NS, DRIVER_POD, "k8s-driver-manager")]
        assert screen.result is not None and screen.result.lines[-1] == CRASH
        assert not screen.loading_log
        events = shown(screen, "#pod-log-events-body")
        assert "BackOff" in events
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_e_opens_the_same_screen_and_c_switches_container() -> None:
    pane = PipelinePane(id="detail-pipeline")
    app = HostApp(pipeline_snapshot(), widget=pane, node=BROKEN, source=_source())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pane.focus()
        await pilot.press("e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PodLogScreen)
        assert screen._containers == (None, "k8s-driver-manager")
        await pilot.press("c")
        await pilot.pause()
        assert app.log_requests[-1] == (NS, DRIVER_POD, None)
        assert app.screen is screen and screen.container is None


async def test_a_failed_read_is_one_clear_line() -> None:
    pane = PipelinePane(id="detail-pipeline")
    app = HostApp(pipeline_snapshot(), widget=pane, node=BROKEN,
                  source=_source(fail="pods \"x\" is forbidden"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pane.focus()
        await pilot.press("enter")
        await pilot.pause()
        status = shown(app.screen, "#pod-log-status")
        assert "✖ could not read the log: pods \"x\" is forbidden" in status


async def test_pod_log_screen_says_loading_until_the_read_arrives() -> None:
    screen = PodLogScreen(NS, DRIVER_POD, "k8s-driver-manager")
    app = HostApp(pipeline_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "loading log of k8s-driver-manager" in shown(screen, "#pod-log-status")


async def test_switching_node_moves_the_pipeline_cursor_to_its_break() -> None:
    pane = PipelinePane(id="detail-pipeline")
    app = HostApp(pipeline_snapshot(), widget=pane, node=HEALTHY)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert pane.cursor == "driver"  # healthy: the top of the chain
        pane.show_node(BROKEN)
        await pilot.press("down")
        pane.show_node(BROKEN)
        assert pane.cursor == "container-toolkit"  # same node again: cursor kept


async def test_upgrades_cursor_follows_a_node_that_moves_lane() -> None:
    screen = UpgradesScreen()
    app = HostApp(upgrade_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lanes = screen.lanes
        assert lanes.current_node == upgrade_node(4)  # first node of the first lane
        screen.show_node(upgrade_node(1))
        await pilot.pause()
        assert lanes.current_node == upgrade_node(1)
        before = lanes.cursor_row
        states = upgrade_states()
        states[upgrade_node(1)] = "pod-deletion-required"
        app.deliver(upgrade_snapshot(states))
        await pilot.pause()
        assert lanes.current_node == upgrade_node(1)
        assert lanes.cursor_row != before
        selected = shown(screen, "#upgrades-selected")
        assert "pod-deletion-required" in selected


async def test_upgrades_enter_jumps_to_the_pipeline_and_headings_do_nothing() -> None:
    screen = UpgradesScreen()
    app = HostApp(upgrade_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("down", "down")  # n04 -> n05 -> heading wait-for-jobs
        assert screen.lanes.current_node is None
        await pilot.press("enter")
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.jumps == [(upgrade_node(0), "pipeline")]


async def test_upgrades_failed_node_shows_its_last_event() -> None:
    screen = UpgradesScreen()
    app = HostApp(upgrade_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen.show_node(upgrade_node(3))
        await pilot.pause()
        selected = shown(screen, "#upgrades-selected")
        assert "last GPUDriverUpgrade event (Warning, 2 h ago)" in selected


async def test_mig_cursor_moves_between_nodes_and_enter_jumps() -> None:
    screen = MigScreen()
    app = HostApp(mig_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        layout = screen.layout_widget
        assert layout.cursor == "a100-pool-node-1"
        await pilot.press("down", "down", "down")
        assert layout.cursor == "a100-pool-node-3"
        await pilot.press("enter")
        await pilot.pause()
        assert app.jumps == [("a100-pool-node-3", "pipeline")]
        screen.show_node("a100-pool-node-2")
        assert layout.cursor == "a100-pool-node-2"


async def test_detail_and_metrics_follow_the_node() -> None:
    detail, metrics = NodeDetail(id="detail-node"), MetricsPane(id="detail-metrics")
    app = HostApp(pipeline_snapshot(), widget=detail, node=BROKEN)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.mount(metrics)
        metrics.show_snapshot(app.snapshot, NOW)
        metrics.show_node(BROKEN)
        await pilot.pause()
        assert "kernel 6.8.0-1015-gcp" in shown(detail, "#node-detail-body")
        body = shown(metrics, "#metrics-body")
        assert "nvidia-dcgm-exporter-h4k9s" in body


async def test_mig_l_opens_the_mig_manager_log_of_the_selected_node() -> None:
    screen = MigScreen()
    app = HostApp(mig_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("l")  # node-1 has no mig-manager pod: nothing is requested
        await pilot.pause()
        assert app.log_requests == []
        screen.show_node("a100-pool-node-3")
        await pilot.press("l")
        await pilot.pause()
        assert app.log_requests == [(NS, "nvidia-mig-manager-w8x2p", None)]
        assert isinstance(app.screen, PodLogScreen)
