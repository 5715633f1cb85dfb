"""GPU health through a REAL Prometheus holding 30 min of backfilled DCGM history.

One planted fault per node, a healthy control node, and a counter reset (a node reboot)
that must not read as a rise. Each failure is found in ONE query whatever the fleet size,
with its code and severity, and says it was measured by Prometheus. Fails on the code
before the health rules: no query read these counters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gputui.domain import health_fields as H
from gputui.domain.findings_health import counter_findings
from gputui.domain.inputs import GpuHealth
from gputui.domain.model import Severity
from gputui.domain.thresholds import DomainThresholds
from gputui.sources.prom_health import read_health
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from tests.metrics.prom import Backfill, Prometheus, start_prometheus

pytestmark = pytest.mark.prometheus

STEP = 60.0
SPAN = 30 * 60.0
CLOCK = {"now": time.time()}
MODEL = "NVIDIA H100 80GB HBM3"


def _series(value: float | Callable[[float], float]) -> list[tuple[float, float]]:
    """30 min of points every minute; ``value`` a number or f(minutes ago) -> number."""
    now = CLOCK["now"] - 30
    points = []
    for i in range(int(SPAN // STEP) + 1):
        when = now - SPAN + i * STEP
        ago = (now - when) / 60.0
        points.append((when, float(value(ago) if callable(value) else value)))
    return points


def _gpu(host: str, gpu: int, label: str = "Hostname") -> dict[str, str]:
    return {"gpu": str(gpu), "UUID": f"GPU-{host}-{gpu}", "pci_bus_id": f"00000000:{gpu:02X}:00.0",
            "modelName": MODEL, label: host}


def _base(host: str, gpus: int, label: str = "Hostname", temp: float = 70.0,
          hot: int | None = None) -> list[Backfill]:
    """Default counters of a healthy node (flat, non-zero: counters never start at 0)."""
    series: list[Backfill] = []
    for i in range(gpus):
        labels = _gpu(host, i, label)
        series += [
            ("DCGM_FI_DEV_GPU_TEMP", labels, _series(92.0 if i == hot else temp)),
            ("DCGM_FI_DEV_MEMORY_TEMP", labels, _series(80.0)),
            ("DCGM_FI_DEV_SM_CLOCK", labels, _series(900.0 if i == hot else 1980.0)),
            ("DCGM_FI_DEV_GPU_UTIL", labels, _series(98.0)),
            (H.UNCORRECTABLE_REMAPPED_ROWS, labels, _series(0)),
            (H.CORRECTABLE_REMAPPED_ROWS, labels, _series(2)),
            (H.PCIE_REPLAY, labels, _series(120)),
        ]
    return series


def history() -> list[Backfill]:
    series = _base("node-ok", 2) + _base("node-hot", 4, hot=3)
    rows = _gpu("node-rows", 0)
    series += [s for s in _base("node-rows", 1) if s[0] != H.UNCORRECTABLE_REMAPPED_ROWS]
    series.append((H.UNCORRECTABLE_REMAPPED_ROWS, rows, _series(lambda ago: 1 if ago < 6 else 0)))
    pcie = _gpu("node-pcie", 0, "hostname")  # the HEAD exporter's lowercase label
    series += [s for s in _base("node-pcie", 1, "hostname") if s[0] != H.PCIE_REPLAY]
    series.append((H.PCIE_REPLAY, pcie, _series(lambda ago: 50_000 - 300 * ago)))
    link = _gpu("node-link", 0)
    series += _base("node-link", 1)
    series.append((H.NVLINK_CRC_FLIT, link, _series(lambda ago: 900 - 5 * ago)))
    # thermal violation: half of every second for the whole history (ns)
    therm = _gpu("node-therm", 0)
    series += _base("node-therm", 1)
    series.append(("DCGM_FI_DEV_THERMAL_VIOLATION", therm,
                   _series(lambda ago: 10**13 - 0.5e9 * 60 * ago)))
    # dcgm-exporter's clock events: hardware thermal slowdown in every 5 min window
    events = _gpu("node-events", 0)
    series += _base("node-events", 1)
    series.append((H.CLOCK_EVENTS, {**events, "clock_event": "hw_thermal"}, _series(40)))
    series.append((H.CLOCK_EVENTS, {**events, "clock_event": "gpu_idle"}, _series(3)))
    # a reboot 10 min ago reset the replay counter: no rise since
    reset = _gpu("node-reset", 0)
    series += [s for s in _base("node-reset", 1) if s[0] != H.PCIE_REPLAY]
    series.append((H.PCIE_REPLAY, reset, _series(lambda ago: 9_000 if ago > 10 else 3)))
    # a GPU reported until 20 min ago and not since (fell off the bus; node back with 1)
    series += _base("node-short", 1)
    gone = _gpu("node-short", 1)
    series.append(("DCGM_FI_DEV_GPU_TEMP", gone,
                   [p for p in _series(60.0) if p[0] < CLOCK["now"] - 20 * 60]))
    return series


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    CLOCK["now"] = time.time()
    server = start_prometheus(Path(tmp_path_factory.mktemp("prom")), backfill=history())
    yield server
    server.stop()


NODES = ("node-ok", "node-hot", "node-rows", "node-pcie", "node-link", "node-therm",
         "node-reset", "node-short", "node-events")


@pytest.fixture(scope="module")
def health(prometheus: Prometheus) -> dict[str, GpuHealth]:
    source = PrometheusMetrics(PrometheusOptions(prometheus.url))
    counts = source.health(CLOCK["now"])
    before = source.traffic.queries
    windows = H.HealthWindows.of(DomainThresholds())
    found = read_health(source, counts, CLOCK["now"], windows)
    assert source.traffic.queries - before == 1  # one query, whatever the fleet
    source.close()
    return found


def _codes(health: dict[str, GpuHealth], node: str) -> dict[str, Severity]:
    return {x.code: x.severity for x in counter_findings(node, health[node], DomainThresholds())}


def test_every_node_is_read(health: dict[str, GpuHealth]) -> None:
    assert set(NODES) <= set(health)
    assert all(h.origin == "prometheus" and h.window == 600.0 for h in health.values())


def test_the_healthy_control_and_the_reset_counter_stay_quiet(
        health: dict[str, GpuHealth]) -> None:
    assert _codes(health, "node-ok") == {}
    assert _codes(health, "node-reset") == {}
    assert not health["node-ok"].rises and not health["node-ok"].gone


def test_an_uncorrectable_remap_is_critical(health: dict[str, GpuHealth]) -> None:
    assert _codes(health, "node-rows") == {"gpu-memory-error": Severity.CRITICAL}
    [x] = counter_findings("node-rows", health["node-rows"], DomainThresholds())
    assert x.message.endswith("(Prometheus)") and "UNCORRECTABLE_REMAPPED_ROWS" in x.message


def test_pcie_replays_on_the_lowercase_hostname_label(health: dict[str, GpuHealth]) -> None:
    assert _codes(health, "node-pcie") == {"pcie-replays": Severity.WARNING}


def test_nvlink_errors(health: dict[str, GpuHealth]) -> None:
    assert _codes(health, "node-link") == {"nvlink-errors": Severity.WARNING}
    assert H.NVLINK_CRC_FLIT in health["node-link"].exported


def test_thermal_violation_counter(health: dict[str, GpuHealth]) -> None:
    assert _codes(health, "node-therm") == {"gpu-throttled": Severity.WARNING}
    [x] = counter_findings("node-therm", health["node-therm"], DomainThresholds())
    assert "thermal throttling 50%" in x.message


def test_hot_slow_gpu_without_violation_counters(health: dict[str, GpuHealth]) -> None:
    hot = health["node-hot"]
    assert not hot.exported & set(H.VIOLATIONS)  # another node's counters are not its own
    assert {h.gpu for h in hot.heat} == {0, 1, 2, 3}
    [x] = counter_findings("node-hot", hot, DomainThresholds())
    assert x.code == "gpu-throttled" and x.subject == "gpu3" and "92 °C" in x.message


def test_clock_events_where_no_violation_counter(health: dict[str, GpuHealth]) -> None:
    assert health["node-events"].clock_events == ((0, "hw_thermal", 300.0),)
    assert _codes(health, "node-events") == {"gpu-throttled": Severity.WARNING}


def test_a_gpu_gone_within_the_lookback_is_named(health: dict[str, GpuHealth]) -> None:
    [gone] = health["node-short"].gone
    assert (gone.gpu, gone.uuid, gone.pci_bus_id) == (1, "GPU-node-short-1", "00000000:01:00.0")
    assert health["node-short"].gpus_reported == 1
