"""The metrics pane's rendering and the scale logic, from fixed readings."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from gputui.domain.metrics import EMPTY_METRICS, MetricsOrigin, MetricsReading
from gputui.domain.model import Finding, Severity
from gputui.ui.node_rows import util_cell
from gputui.ui.render.metrics import render_metrics, source_line
from gputui.ui.render.sparkline import LEVELS, bar, braille_line, scale_level
from tests.ui.panes.data import BROKEN, NOW, broken_node
from tests.ui.panes.metrics_data import node_reading


def text(renderable: object, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_flat_98_percent_line_draws_near_the_top() -> None:
    """Unlike a min..max sparkline, a pinned GPU fills its cells, an idle one stays empty."""
    assert scale_level(98.0, 0, 100) == LEVELS
    full = braille_line([98.0] * 20, 0, 100, 10)
    assert full == "⣿" * 10
    assert braille_line([0.0] * 20, 0, 100, 10) == "\u2800" * 10
    assert scale_level(1.0, 0, 100) == 1  # busy at all is visible
    assert scale_level(150.0, 0, 100) == LEVELS and scale_level(-5, 0, 100) == 0
    assert scale_level(50.0, 0, 0) == 0  # no scale, no drawing


def test_two_samples_per_cell_newest_on_the_right() -> None:
    line = braille_line([0.0, 100.0], 0, 100, 3)
    assert line[:2] == "\u2800\u2800"
    assert ord(line[2]) - 0x2800 == 0x80 | 0x20 | 0x10 | 0x08  # right column full, left empty
    assert len(braille_line(list(range(500)), 0, 500, 40)) == 40
    assert bar(98, 0, 100) == "█" and bar(0, 0, 100) == " "
    assert util_cell(98.0) == ("█  98%", "") and util_cell(None)[0] == ""


def test_pane_shows_source_gpus_scales_pods_and_xids() -> None:
    xid = Finding("xid-error", Severity.CRITICAL, BROKEN,
                  "GPU 3: XID 79 (GPU has fallen off the bus) 5 min ago", "Drain.", "metrics",
                  "gpu3")
    node = replace(broken_node(), findings=(xid,))
    out = text(render_metrics(node, "gpu-operator", node_reading(), NOW), 120)
    lines = out.splitlines()
    assert lines[0].startswith("Prometheus http://prometheus.monitoring:9090, 2 s ago")
    assert "GPU 0  H100 80GB HBM3  ml-training/trainer-llama-0" in out
    assert "GPU 2 · 3g.40gb #1" in out and "ml-inference/llm-serve-0" in out
    util0 = next(line for line in lines if line.strip().startswith("util") and "98 %" in line)
    assert "⣿⣿⣿⣿" in util0
    assert "/ 79.6 GiB" in out and "/ 700 W" in out and "1980 MHz" in out
    assert "✖ critical  XID 79 (GPU has fallen off the bus) 5 min ago" in out
    assert "no readings: the GPU reports only its XID series" in out


def test_pane_says_which_fallback_and_since_when() -> None:
    out = text(render_metrics(broken_node(), "gpu-operator", node_reading(kind="exporter"),
                              NOW), 160)
    first = out.splitlines()[0]
    assert first.startswith("exporter scrape via the API server's pod proxy, 1 s ago")
    assert "Prometheus unreachable (connection refused) since" in first


def test_pane_without_readings_names_the_exporter_pod() -> None:
    reading = MetricsReading(MetricsOrigin("exporter", "API server pod proxy", 0.0,
                                           error="no running dcgm-exporter pod on x"))
    out = text(render_metrics(broken_node(), "gpu-operator", reading, NOW), 160)
    assert "waiting for the first reading" in out and "last read failed: no running" in out
    assert "pod gpu-operator/nvidia-dcgm-exporter-h4k9s port 9400 /metrics" in out
    none = text(source_line(EMPTY_METRICS.origin, NOW))
    assert none.strip() == "no metrics source"


def test_a_gpu_whose_series_stopped_says_since_when() -> None:
    """Journey 4: GPU 3 fell off the bus; its history stays, its last value is not current."""
    from gputui.domain.metrics import NodeMetrics
    from tests.ui.panes.metrics_data import busy_gpu

    gpu = busy_gpu(3)
    fallen = replace(gpu, util=gpu.util[:60], temp=gpu.temp[:60], fb_used=gpu.fb_used[:60],
                     power=gpu.power[:60], sm_clock=gpu.sm_clock[:60], xid=79)
    reading = replace(node_reading(), node=NodeMetrics(BROKEN, (busy_gpu(0), fallen)))
    out = text(render_metrics(broken_node(), "gpu-operator", reading, NOW), 160)
    assert out.count("no readings since") == 1
    assert "ml-training/trainer-llama-0" in out.split("GPU 3")[1]


def test_fleet_line_and_header_count_mig_devices_alike() -> None:
    """After a MIG change the header counts whole GPUs and MIG devices (``GPUs 104/104``);
    the fleet line counts the same units and both say how many are MIG devices, within 80
    columns."""
    from gputui.domain.metrics import FleetMetrics
    from gputui.domain.model import ClusterSnapshot, SnapshotCounts
    from gputui.ui.render.fleet import fleet_line
    from gputui.ui.widgets.status_header import counts_line

    fleet = FleetMetrics("fleet", 104, 40, 35.0, ("gke-prod-a100-pool-2b9c-qvzd", 3, 71.0), 0,
                         mig_devices=56)
    line = fleet_line(fleet, 80)
    assert "GPUs 40 busy / 64 idle (56 MIG)" in line.plain and line.cell_len <= 80
    whole = fleet_line(replace(fleet, mig_devices=0), 80).plain
    assert "GPUs 40 busy / 64 idle │" in whole and "MIG" not in whole
    counts = SnapshotCounts(gpu_nodes=7, nodes_ready=7, gpus_total=104, gpus_allocatable=104,
                            mig_devices=56)
    header = counts_line(ClusterSnapshot(context="c", server="s", generated_at=NOW,
                                         counts=counts), 80).plain
    assert "GPUs 104/104 (56 MIG) │ 0 with findings │ 0 upgrading" in header


def test_heading_counts_what_it_shows_and_says_mig_devices() -> None:
    """Under ``single`` GFD's ``gpu.count`` counts MIG devices (k8s-device-plugin
    ``internal/lm/mig-strategy.go``): the pane of an ``all-1g.10gb`` node showing 56
    instances on 8 GPUs says so, as the header's ``GPUs 104/104 (56 MIG)`` does; it said
    "56 GPUs" before."""
    from gputui.domain.metrics import GpuMetrics, NodeMetrics

    product = "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    node = replace(broken_node(), product=product, gpu_count=56)
    instances = tuple(GpuMetrics(gpu=g, instance=str(i), profile="1g.10gb")
                      for g in range(8) for i in range(7))
    reading = replace(node_reading(), node=NodeMetrics(BROKEN, instances))
    heading = text(render_metrics(node, "gpu-operator", reading, NOW), 160).splitlines()[1]
    assert f"{BROKEN}  56 MIG devices on 8 GPUs  {product}" in heading
    unread = text(render_metrics(node, "gpu-operator", EMPTY_METRICS, NOW), 160)
    assert f"{BROKEN}  56 MIG devices  {product}" in unread and "56 GPUs" not in unread
    mixed = text(render_metrics(broken_node(), "gpu-operator", node_reading(), NOW), 160)
    assert f"{BROKEN}  3 GPUs + 1 MIG device on 1 GPU  " in mixed
    whole = text(render_metrics(broken_node(), "gpu-operator", EMPTY_METRICS, NOW), 160)
    assert f"{BROKEN}  8 GPUs  " in whole
