"""The metrics pane's per-GPU health line: each counter's evidence or "not exported", coloured
by the GPU's health finding; the node's health findings listed with their hints. Fails on the
code before it (the pane had no health line and did not list these codes)."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth
from gputui.domain.metrics import NodeMetrics
from gputui.domain.model import Finding, Severity
from gputui.ui.render.metrics import render_metrics
from tests.ui.panes.data import BROKEN, NOW, broken_node
from tests.ui.panes.metrics_data import busy_gpu, node_reading


def text(renderable: object, width: int = 160) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


DEFAULTS = frozenset({H.UNCORRECTABLE_REMAPPED_ROWS, H.CORRECTABLE_REMAPPED_ROWS,
                      H.PCIE_REPLAY})


def _render(health: GpuHealth | None, findings: tuple[Finding, ...] = ()) -> str:
    node = replace(broken_node(), findings=findings, gpu_health=health)
    reading = node_reading()
    reading = replace(reading, node=NodeMetrics(BROKEN, (busy_gpu(0), busy_gpu(1))))
    return text(render_metrics(node, "gpu-operator", reading, NOW))


def test_default_counters_say_what_they_did_and_the_opt_in_ones_not_exported() -> None:
    health = GpuHealth(8, rises=(CounterRise(1, H.PCIE_REPLAY, 3000, 600.0),
                                 CounterRise(1, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 3600.0)),
                       exported=DEFAULTS, origin="prometheus", window=600.0)
    pcie = Finding("pcie-replays", Severity.WARNING, BROKEN,
                   "GPU 1: PCIe replays at 300/min (3,000 over the last 10 min (Prometheus); "
                   "limit 8/min)", "A degrading PCIe link or riser.", "metrics", "gpu1")
    out = _render(health, (pcie,))
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("health")]
    assert lines == [
        "health  rows: no new remap · PCIe replays: none · NVLink errors not exported · "
        "throttle counters not exported",
        "health  rows: +1 uncorrectable · PCIe replays: +3,000 (300/min) · NVLink errors "
        "not exported · throttle counters not exported"]
    # the node's health findings are listed with the other metrics findings
    assert "▲ warning  GPU 1: PCIe replays at 300/min" in out
    assert "A degrading PCIe link or riser." in out


def test_opt_in_counters_when_exported() -> None:
    exported = DEFAULTS | set(H.NVLINK_ERRORS) | set(H.VIOLATIONS)
    health = GpuHealth(8, rises=(CounterRise(0, H.NVLINK_CRC_FLIT, 12, 600.0),
                                 CounterRise(0, "DCGM_FI_DEV_THERMAL_VIOLATION",
                                             300 * H.NS, 600.0)),
                       exported=exported, origin="exporter", window=600.0)
    out = _render(health)
    assert "NVLink errors: +12 · throttled 50% (thermal)" in out
    assert "NVLink errors: none · not throttled" in out


def test_no_health_line_without_metrics_health() -> None:
    assert "health  " not in _render(None)


def test_fleet_line_counts_gpus_with_health_findings_first() -> None:
    from gputui.domain.metrics import FleetMetrics
    from gputui.ui.render.fleet import fleet_line

    fleet = FleetMetrics("fleet", 64, 40, 61.0, ("gpu-a", 3, 91.0), 1)
    line = fleet_line(fleet, 80, unhealthy=3).plain
    assert line.startswith("fleet: 3 GPUs with health findings │ util 61%")
    assert "health" not in fleet_line(fleet, 80).plain  # none: the line as it was
