"""GPU health from exporter scrapes over the session (no Prometheus): the live tracker scrapes
the exposition text every minute, keeps counter deltas per node and GPU across a counter
reset, and the snapshot reports each planted fault with its code and severity while the
control node stays quiet. Fails on the code before the counter book (no rises were kept).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gputui.domain import health_fields as H
from gputui.domain.model import Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DomainThresholds
from gputui.sources import scrape, xids
from gputui.sources.health_book import HealthBook
from gputui.sources.tape.health import health_from_json, health_to_json
from tests.domain import factory as f

MODEL = "NVIDIA H100 80GB HBM3"
NODES = ("gpu-ok", "gpu-rows", "gpu-pcie", "gpu-link", "gpu-therm", "gpu-hot", "gpu-short",
         "gpu-reset", "gpu-events")
T = 1_000_000.0
#: scrape ``k`` (0..11) -> node -> GPU -> metric -> value
Plan = Callable[[int], dict[str, dict[int, dict[str, float]]]]


def _gpu(k: int, temp: float = 70.0, clock: float = 1980.0, **extra: float) -> dict[str, float]:
    return {"DCGM_FI_DEV_GPU_TEMP": temp, "DCGM_FI_DEV_SM_CLOCK": clock,
            "DCGM_FI_DEV_GPU_UTIL": 98.0, H.MEMORY_TEMP: 80.0,
            H.UNCORRECTABLE_REMAPPED_ROWS: 0.0, H.CORRECTABLE_REMAPPED_ROWS: 2.0,
            H.PCIE_REPLAY: 120.0, **extra}


def plan(k: int) -> dict[str, dict[int, dict[str, float]]]:
    """One fault per node of 8 GPUs (the rest healthy), a minute between scrapes."""
    faults = {
        "gpu-ok": {0: _gpu(k), 1: _gpu(k)},
        "gpu-rows": {0: _gpu(k, **{H.UNCORRECTABLE_REMAPPED_ROWS: 1.0 if k >= 5 else 0.0})},
        "gpu-pcie": {0: _gpu(k, **{H.PCIE_REPLAY: 120.0 + 300 * k})},
        "gpu-link": {0: _gpu(k, **{H.NVLINK_CRC_FLIT: 7.0 + 5 * k})},
        "gpu-therm": {0: _gpu(k, DCGM_FI_DEV_THERMAL_VIOLATION=1e12 + 30e9 * k)},
        "gpu-hot": {0: _gpu(k), 1: _gpu(k, temp=92.0, clock=900.0)},
        # dcgm-exporter's clock events: hardware thermal slowdown in every window
        "gpu-events": {2: _gpu(k, **{f"{H.CLOCK_EVENTS}|hw_thermal": 40.0,
                                     f"{H.CLOCK_EVENTS}|gpu_idle": 2.0})},
        # GPU 7 falls off the bus at scrape 6: gone from the exposition (below)
        "gpu-short": {},
        # the node rebooted at scrape 6: the replay counter starts again from 0
        "gpu-reset": {0: _gpu(k, **{H.PCIE_REPLAY: 9000.0 + k if k < 6 else float(k - 6)})},
    }
    short = 7 if k >= 6 else 8
    return {node: {gpu: gpus.get(gpu) or _gpu(k) for gpu in range(short if node == "gpu-short"
                                                                   else 8)}
            for node, gpus in faults.items()}


def exposition(node: str, gpus: dict[int, dict[str, float]]) -> str:
    lines = []
    for gpu, metrics in gpus.items():
        labels = (f'gpu="{gpu}",UUID="GPU-{node}-{gpu}",pci_bus_id="00000000:{gpu:02X}:00.0",'
                  f'modelName="{MODEL}",Hostname="{node}"')
        for name, value in metrics.items():
            metric, _, event = name.partition("|")
            extra = f',clock_event="{event}"' if event else ""
            lines.append(f"{metric}{{{labels}{extra}}} {value}")
    return "\n".join(lines) + "\n"


def _objects(gpu_health: Any = None) -> Any:
    nodes = [f.node(n) for n in NODES]
    pods = [p for n in NODES for p in f.healthy_pods(n)]
    return f.objects(nodes, pods, **({"gpu_health": gpu_health} if gpu_health else {}))


@pytest.fixture(scope="module")
def tracker() -> xids.XidTracker:
    """A live tracker after 12 scrapes a minute apart, each answered from :func:`plan`."""
    step = {"k": 0}
    pods = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in _objects().pods.values()}

    def scrape_text(http: Any, namespace: str, pod: str) -> str:
        node = pods[pod]
        return exposition(node, plan(step["k"])[node])

    patch = pytest.MonkeyPatch()
    patch.setattr(scrape, "scrape_text", scrape_text)
    windows = H.HealthWindows.of(DomainThresholds())
    live = xids.XidTracker(None, windows=windows)  # type: ignore[arg-type]
    for k in range(12):
        step["k"] = k
        live.refresh(_objects(), T + 60 * k)
    patch.undo()
    return live


def _codes(live: xids.XidTracker, node: str) -> dict[str, Severity]:
    snap = SnapshotBuilder(DomainThresholds()).build(_objects(live.health), T + 660)
    return {x.code: x.severity for x in snap.findings if x.node == node}


def test_every_exporter_is_read_and_the_evidence_kept_not_the_readings(
        tracker: xids.XidTracker) -> None:
    assert set(tracker.health) == set(NODES)
    assert all(h.origin == "exporter" and not h.readings for h in tracker.health.values())


@pytest.mark.parametrize(("node", "codes"), [
    ("gpu-ok", {}),
    ("gpu-reset", {}),  # a counter reset is no rise
    ("gpu-rows", {"gpu-memory-error": Severity.CRITICAL}),
    ("gpu-pcie", {"pcie-replays": Severity.WARNING}),
    ("gpu-link", {"nvlink-errors": Severity.WARNING}),
    ("gpu-therm", {"gpu-throttled": Severity.WARNING}),
    ("gpu-hot", {"gpu-throttled": Severity.WARNING}),
    ("gpu-events", {"gpu-throttled": Severity.WARNING}),
])
def test_each_fault_on_its_node(tracker: xids.XidTracker, node: str,
                                codes: dict[str, Severity]) -> None:
    assert _codes(tracker, node) == codes


def test_findings_say_they_come_from_exporter_scrapes(tracker: xids.XidTracker) -> None:
    snap = SnapshotBuilder(DomainThresholds()).build(_objects(tracker.health), T + 660)
    [rows] = [x for x in snap.findings if x.code == "gpu-memory-error"]
    # the memory counters look back an hour: gputui has read them for 11 minutes
    assert rows.message.endswith("since gputui started reading it 11 min ago (exporter scrapes)")
    [pcie] = [x for x in snap.findings if x.code == "pcie-replays"]
    assert "300/min" in pcie.message and "over the last 10 min (exporter scrapes)" in pcie.message


def test_a_gpu_no_longer_scraped_is_named_gone(tracker: xids.XidTracker) -> None:
    short = tracker.health["gpu-short"]
    assert [(g.gpu, g.uuid) for g in short.gone] == [(7, "GPU-gpu-short-7")]
    assert short.gpus_reported == 7


def test_the_evidence_survives_a_recording(tracker: xids.XidTracker) -> None:
    """A replay judges what the session judged: the rises, heat and gone GPUs are kept."""
    for health in tracker.health.values():
        assert health_from_json(health_to_json(health)) == health
    assert health_from_json([8, [2]]).row_remap_failed == (2,)  # older files


def test_counter_reset_mid_window_counts_what_rose_since() -> None:
    book = HealthBook(H.HealthWindows())
    values = [100.0, 110.0, 2.0, 5.0]  # reset between the 2nd and 3rd scrape
    from gputui.domain.inputs import GpuHealth
    found = None
    for i, value in enumerate(values):
        found = book.update("n", GpuHealth(1, readings=((0, H.PCIE_REPLAY, value),)),
                            T + 60 * i)
    assert found is not None
    [rise] = found.rises
    assert (rise.rise, rise.seconds) == (10.0 + 2.0 + 3.0, 180.0)


def test_a_gpu_replaced_in_its_slot_is_not_gone_and_old_ones_are_forgotten() -> None:
    from gputui.domain.inputs import GpuHealth, GpuId

    book = HealthBook(H.HealthWindows(lookback=3600.0))

    def scrape(now: float, *gpus: GpuId) -> GpuHealth:
        return book.update("n", GpuHealth(len(gpus), present=gpus), now)

    old = [GpuId(i, f"GPU-old-{i}", f"00000000:{i:02X}:00.0") for i in range(3)]
    scrape(T, *old)
    new = GpuId(1, "GPU-new-1", old[1].pci_bus_id)  # RMA: a new GPU in the same slot
    assert scrape(T + 60, old[0], new, old[2]).gone == ()
    assert [g.uuid for g in scrape(T + 120, old[0], new).gone] == ["GPU-old-2"]
    assert scrape(T + 120 + 3601, old[0], new).gone == ()  # past the lookback


def test_a_steady_rate_is_not_inflated_by_the_scrape_before_the_window() -> None:
    """Scrapes every 120 s of a counter rising 300 a minute, judged over 10 minutes whose
    start falls between two scrapes: 300 a minute, not the 356 the drill read."""
    from gputui.sources.health_book import _Trace

    trace = _Trace(first=0.0)
    for tick in range(0, 1801, 120):
        trace.add(float(tick), 5.0 * tick, keep=3600.0)
    rise, seconds = trace.rise(1800.0, 630.0)
    assert 60.0 * rise / seconds == pytest.approx(300.0)
    steady = _Trace(first=0.0)
    for tick in range(0, 1801, 120):
        steady.add(float(tick), 7.0, keep=3600.0)  # unchanged: no rise, the span still known
    assert steady.rise(1800.0, 630.0) == (0.0, 630.0)
