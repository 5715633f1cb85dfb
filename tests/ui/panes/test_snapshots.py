"""Screenshots of the detail views at 80x24 and 160x48, from frozen snapshots and clock.

The host app (``host.py``) mounts one view with the gputui theme and the panes' stylesheets,
so these pictures change only when the panes do, not when the shell's header does.
Regenerate on purpose: ``python -m pytest tests/ui/panes --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from gputui.ui.contracts import PodLogRequested
from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.metrics_pane import MetricsPane
from gputui.ui.widgets.node_detail import NodeDetail
from gputui.ui.widgets.pipeline import PipelinePane
from tests.ui.panes.data import (
    BROKEN,
    NS,
    blocked_snapshot,
    mig_snapshot,
    pipeline_snapshot,
    upgrade_node,
    upgrade_snapshot,
)
from tests.ui.panes.host import FakeSource, HostApp

SIZES = [(80, 24), (160, 48)]
SnapCompare = Callable[..., bool]


async def _settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await pilot.pause()


def _focus(selector: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        await _settle(pilot)
        pilot.app.screen.query_one(selector).focus()
        await _settle(pilot)
    return run


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_pipeline_broken_driver(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    app = HostApp(pipeline_snapshot(), widget=PipelinePane(id="detail-pipeline"), node=BROKEN)
    assert snap_compare(app, terminal_size=size, run_before=_focus("#detail-pipeline"))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_upgrades_lanes(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    async def on_failed(pilot: Pilot[Any]) -> None:
        await _settle(pilot)
        pilot.app.screen.show_node(upgrade_node(3))  # type: ignore[attr-defined]
        await _settle(pilot)

    app = HostApp(blocked_snapshot() if size[0] > 100 else upgrade_snapshot(),
                  screen=UpgradesScreen())
    assert snap_compare(app, terminal_size=size, run_before=on_failed)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_mig_layouts(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    app = HostApp(mig_snapshot(), screen=MigScreen())
    assert snap_compare(app, terminal_size=size, press=["down"])


def test_node_detail(snap_compare: SnapCompare) -> None:
    app = HostApp(pipeline_snapshot(), widget=NodeDetail(id="detail-node"), node=BROKEN)
    assert snap_compare(app, terminal_size=(160, 48), run_before=_settle)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
def test_metrics_pane(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Fixed readings: a pinned GPU, an idle one, a MIG instance and one off the bus."""
    from tests.ui.panes.data import NOW
    from tests.ui.panes.metrics_data import node_reading

    pane = MetricsPane(id="detail-metrics")

    async def feed(pilot: Pilot[Any]) -> None:
        await _settle(pilot)
        pane.show_metrics(node_reading(kind="exporter" if size[0] < 100 else "prometheus"), NOW)
        await _settle(pilot)

    app = HostApp(pipeline_snapshot(), widget=pane, node=BROKEN)
    assert snap_compare(app, terminal_size=size, run_before=feed)


def test_pod_log(snap_compare: SnapCompare) -> None:
    source = FakeSource({("nvidia-driver-daemonset-8x7kq", "k8s-driver-manager"): [
        "Uninstalling the legacy driver...",
        "Could not unload NVIDIA driver kernel modules, driver is in use"]},
        [{"type": "Warning", "reason": "BackOff", "count": 14,
          "message": "Back-off restarting failed container k8s-driver-manager",
          "lastTimestamp": "2025-11-29T09:58:00Z"}])

    async def open_log(pilot: Pilot[Any]) -> None:
        await _settle(pilot)
        pilot.app.post_message(  # what the pipeline's `l` posts
            PodLogRequested(NS, "nvidia-driver-daemonset-8x7kq", "k8s-driver-manager"))
        await _settle(pilot)
        assert isinstance(pilot.app.screen, PodLogScreen)

    app = HostApp(pipeline_snapshot(), widget=PipelinePane(id="detail-pipeline"), node=BROKEN,
                  source=source)
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_log)
