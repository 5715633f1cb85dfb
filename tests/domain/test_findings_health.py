"""GPU health from counters and counts: each rule fires on its fault, a healthy control node
stays quiet, and normal life (a rebooting, joining, MIG or sharing node) does not look like
a lost GPU. Each test fails on the code before the health rules (no such codes)."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth, GpuHeat, GpuId
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DomainThresholds, threshold_problem
from tests.domain import factory as f

SICK, CONTROL = "gpu-sick", "gpu-control"
HEALTH_CODES = {"gpu-count-dropped", "gpu-memory-error", "pcie-replays", "nvlink-errors",
                "gpu-throttled"}
DEFAULT_EXPORTED = frozenset({H.UNCORRECTABLE_REMAPPED_ROWS, H.CORRECTABLE_REMAPPED_ROWS,
                              H.PCIE_REPLAY})


def build(health: dict[str, GpuHealth], nodes: list[dict[str, Any]] | None = None,
          builder: SnapshotBuilder | None = None, **thresholds: float) -> ClusterSnapshot:
    nodes = nodes if nodes is not None else [f.node(SICK), f.node(CONTROL)]
    pods = [p for n in nodes for p in f.healthy_pods(n["metadata"]["name"])]
    builder = builder or SnapshotBuilder(DomainThresholds(**thresholds))
    return builder.build(f.objects(nodes, pods, gpu_health=health), f.T0)


def health_of(snap: ClusterSnapshot, node: str) -> list[Finding]:
    return [x for x in snap.findings if x.node == node and x.code in HEALTH_CODES]


def only(snap: ClusterSnapshot, code: str, node: str = SICK) -> Finding:
    found = [x for x in snap.findings if x.code == code]
    assert len(found) == 1 and found[0].node == node, [(x.code, x.node, x.message)
                                                       for x in snap.findings]
    return found[0]


def healthy(origin: str = "prometheus", exported: frozenset[str] = DEFAULT_EXPORTED
            ) -> GpuHealth:
    return GpuHealth(8, exported=exported, origin=origin, window=600.0)


def sick(*rises: CounterRise, origin: str = "prometheus",
         exported: frozenset[str] = DEFAULT_EXPORTED, **extra: Any) -> dict[str, GpuHealth]:
    return {SICK: GpuHealth(8, rises=rises, exported=exported, origin=origin, window=600.0,
                            **extra),
            CONTROL: healthy(origin, exported)}


# ---------------------------------------------------------------- gpu-memory-error
def test_an_uncorrectable_remap_is_critical_and_says_how_it_was_measured() -> None:
    snap = build(sick(CounterRise(3, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 3600.0)))
    x = only(snap, "gpu-memory-error")
    assert x.severity is Severity.CRITICAL and x.subject == "gpu3"
    assert x.message == ("GPU 3: 1 uncorrectable memory error (UNCORRECTABLE_REMAPPED_ROWS +1) "
                         "over the last 60 min (Prometheus)")
    assert "reset" in x.hint and "RMA" in x.hint
    assert not health_of(snap, CONTROL)


def test_one_error_seen_by_two_counters_is_one_error() -> None:
    """A DBE rises the volatile DBE count and remaps a row: one error, not two (the drill's
    "2 uncorrectable memory errors" for one, and the RMA hint it brought)."""
    x = only(build(sick(CounterRise(2, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 3600.0),
                        CounterRise(2, H.ECC_DBE_VOL, 1, 3600.0))), "gpu-memory-error")
    assert x.message.startswith("GPU 2: 1 uncorrectable memory error (")
    assert x.hint.startswith("Uncorrectable memory errors are repaired")  # not the RMA one


@pytest.mark.parametrize("counter", [H.RETIRED_DBE, H.ECC_DBE_VOL])
def test_retired_pages_and_volatile_dbe_are_memory_errors(counter: str) -> None:
    x = only(build(sick(CounterRise(0, counter, 2, 3600.0))), "gpu-memory-error")
    assert x.severity is Severity.CRITICAL and "replaced (RMA)" in x.hint  # repeated


def test_correctable_remaps_alone_are_info() -> None:
    x = only(build(sick(CounterRise(1, H.CORRECTABLE_REMAPPED_ROWS, 4, 3600.0))),
             "gpu-memory-error")
    assert x.severity is Severity.INFO and "correctable memory errors only" in x.message


def test_exporter_scrapes_say_since_when_they_measured() -> None:
    x = only(build(sick(CounterRise(3, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 180.0),
                        origin="exporter")), "gpu-memory-error")
    assert x.message.endswith("since gputui started reading it 3 min ago (exporter scrapes)")


# ---------------------------------------------------------------- pcie-replays
def test_pcie_replays_faster_than_the_limit_warn() -> None:
    snap = build(sick(CounterRise(2, H.PCIE_REPLAY, 3000, 600.0)))
    x = only(snap, "pcie-replays")
    assert x.severity is Severity.WARNING and x.subject == "gpu2"
    assert "300/min" in x.message and "over the last 10 min (Prometheus)" in x.message
    assert not health_of(snap, CONTROL)


@pytest.mark.parametrize(("rise", "seconds", "limit"), [
    (20, 600.0, 8.0),    # 2 a minute: a healthy link's occasional replay
    (50, 30.0, 8.0),     # too short a span to judge a rate
    (3000, 600.0, 500.0),  # the limit is a setting
])
def test_pcie_replays_below_the_limit_or_too_short_to_judge_are_quiet(
        rise: float, seconds: float, limit: float) -> None:
    snap = build(sick(CounterRise(2, H.PCIE_REPLAY, rise, seconds)),
                 pcie_replays_per_minute=limit)
    assert not health_of(snap, SICK)


# ---------------------------------------------------------------- nvlink-errors
def test_nvlink_errors_rising_warn_and_name_the_counters() -> None:
    snap = build(sick(CounterRise(4, H.NVLINK_CRC_FLIT, 12, 600.0),
                      CounterRise(4, H.NVLINK_REPLAY, 3, 600.0),
                      exported=DEFAULT_EXPORTED | set(H.NVLINK_ERRORS)))
    x = only(snap, "nvlink-errors")
    assert x.severity is Severity.WARNING
    assert "NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL +12" in x.message
    assert "NVLINK_REPLAY_ERROR_COUNT_TOTAL +3" in x.message
    assert not health_of(snap, CONTROL)


# ---------------------------------------------------------------- gpu-throttled
VIOLATIONS = DEFAULT_EXPORTED | set(H.VIOLATIONS)


def test_thermal_violation_half_the_time_is_throttled_naming_cause_and_time() -> None:
    rise = CounterRise(5, "DCGM_FI_DEV_THERMAL_VIOLATION", 450 * H.NS, 900.0)
    snap = build(sick(rise, exported=VIOLATIONS))
    x = only(snap, "gpu-throttled")
    assert x.severity is Severity.WARNING and x.subject == "gpu5"
    assert x.message == ("GPU 5: thermal throttling 50% of the time, 7 min in all over the "
                         "last 15 min (Prometheus) (THERMAL_VIOLATION)")
    assert not health_of(snap, CONTROL)


@pytest.mark.parametrize(("throttled", "seconds"), [
    (60.0, 900.0),   # 7 %: below throttle_fraction
    (100.0, 120.0),  # 83 % but for 2 min only: not sustained (throttle_minutes 5)
])
def test_brief_or_rare_throttling_is_quiet(throttled: float, seconds: float) -> None:
    rise = CounterRise(5, "DCGM_FI_DEV_POWER_VIOLATION", throttled * H.NS, seconds)
    assert not health_of(build(sick(rise, exported=VIOLATIONS)), SICK)


def test_clock_events_in_every_reading_are_throttling_where_no_violation_counter() -> None:
    events = DEFAULT_EXPORTED | {H.CLOCK_EVENTS}
    snap = build(sick(exported=events, clock_events=((6, "hw_thermal", 600.0),
                                                     (6, "power_cap", 300.0),
                                                     (7, "sw_thermal", 120.0),   # too short
                                                     (1, "gpu_idle", 900.0))))  # not throttling
    x = only(snap, "gpu-throttled")
    assert x.subject == "gpu6" and x.message.startswith(
        "GPU 6: thermal (hardware) throttling (hw_thermal) in every reading for at least 10 min")
    assert not health_of(snap, CONTROL)


def _heat(gpu: int, temp: float, clock: float, util: float = 98.0) -> GpuHeat:
    return GpuHeat(gpu, temp, 80.0, clock, util, 900.0, "NVIDIA H100 80GB HBM3")


def test_without_violation_counters_a_hot_slow_busy_gpu_is_throttled() -> None:
    heat = (_heat(0, 70, 1980), _heat(1, 71, 1970), _heat(3, 92, 900))
    snap = build(sick(heat=heat))
    x = only(snap, "gpu-throttled")
    assert x.subject == "gpu3" and "for at least 15 min" in x.message
    assert "92 °C" in x.message and "900 MHz" in x.message and "1,975 MHz" in x.message
    assert "violation counters not exported" in x.message


@pytest.mark.parametrize("heat", [
    (_heat(0, 70, 1980), _heat(3, 92, 1960)),          # hot but at full clock
    (_heat(0, 70, 1980), _heat(3, 92, 900, util=0.0)),  # hot and slow but idle
    (_heat(0, 70, 1980), _heat(3, 80, 900)),           # slow but not hot
])
def test_heat_without_both_symptoms_under_load_is_quiet(heat: tuple[GpuHeat, ...]) -> None:
    assert not health_of(build(sick(heat=heat)), SICK)


def test_violation_counters_when_exported_win_over_the_heat_guess() -> None:
    heat = (_heat(0, 70, 1980), _heat(3, 92, 900))
    assert not health_of(build(sick(heat=heat, exported=VIOLATIONS)), SICK)


# ---------------------------------------------------------------- gpu-count-dropped
POOL_NODES = ("gpu-a", "gpu-b", "gpu-c")


def _count_node(name: str, count: int, **labels: str) -> dict[str, Any]:
    node = f.node(name, labels={"nvidia.com/gpu.count": str(count), **labels}, gpus=count)
    return node


def test_a_node_with_fewer_gpus_than_its_pool_siblings_is_critical() -> None:
    nodes = [_count_node("gpu-a", 8), _count_node("gpu-b", 8), _count_node("gpu-c", 7)]
    gone = (GpuId(3, "GPU-1f2e", "00000000:53:00.0"),)
    snap = build({"gpu-c": GpuHealth(7, gone=gone)}, nodes)
    x = only(snap, "gpu-count-dropped", "gpu-c")
    assert x.severity is Severity.CRITICAL
    assert x.message == ("7 GPUs where its 2 pool siblings (a3-highgpu-8g, "
                         "NVIDIA-H100-80GB-HBM3) have 8 and it had 8 earlier; gone: GPU 3 "
                         "(GPU-1f2e, PCI 00000000:53:00.0)")
    # the healthy siblings stay quiet, and no per-node check disagrees with the 7
    assert not [x for x in snap.findings if x.node != "gpu-c"]


def test_a_node_that_had_more_gpus_earlier_in_the_session_is_critical_alone() -> None:
    builder = SnapshotBuilder(DomainThresholds())
    assert not health_of(build({}, [_count_node("gpu-a", 8)], builder), "gpu-a")
    x = only(build({}, [_count_node("gpu-a", 7)], builder), "gpu-count-dropped", "gpu-a")
    assert x.message == "7 GPUs where it had 8 earlier"


def test_a_count_seen_while_mig_reconfigures_is_not_remembered() -> None:
    builder = SnapshotBuilder(DomainThresholds())
    busy = _count_node("gpu-a", 9, **{"nvidia.com/mig.config.state": "pending"})
    build({}, [busy], builder)
    assert not health_of(build({}, [_count_node("gpu-a", 8)], builder), "gpu-a")


def test_the_finding_follows_incremental_builds_and_clears_when_the_gpu_is_back() -> None:
    builder = SnapshotBuilder(DomainThresholds())
    nodes = [_count_node("gpu-a", 8), _count_node("gpu-b", 8), _count_node("gpu-c", 7)]
    objs = f.objects(nodes, [p for n in POOL_NODES for p in f.healthy_pods(n)])
    builder.build(objs, f.T0)
    # another node changes: the short node keeps its finding
    snap = builder.build(objs, f.T0 + 10, changed_nodes={"gpu-a"})
    assert [x.node for x in snap.findings if x.code == "gpu-count-dropped"] == ["gpu-c"]
    # the node is deleted: what it had is forgotten, and the pool has no short node
    objs = f.objects(nodes[:2], [p for n in POOL_NODES[:2] for p in f.healthy_pods(n)])
    snap = builder.build(objs, f.T0 + 20, changed_nodes={"gpu-c"})
    assert "gpu-count-dropped" not in {x.code for x in snap.findings}


def _rebooting(name: str) -> dict[str, Any]:
    """NotReady with capacity zeroed; GFD's labels stay as they were."""
    node = f.node(name, ready=False, gpus=0)
    return node


def _joining(name: str) -> dict[str, Any]:
    """NFD saw the GPU; GFD has not labelled a count yet."""
    node = f.node(name, gpus=0)
    del node["metadata"]["labels"]["nvidia.com/gpu.count"]
    return node


def _mig_single(name: str) -> dict[str, Any]:
    """Under ``single`` GFD's gpu.count counts MIG devices (8 GPUs x 7 = 56)."""
    return f.node(name, gpus=56, labels={
        "nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "success",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",
        "nvidia.com/gpu.count": "56"})


def _shared(name: str) -> dict[str, Any]:
    """Time-slicing x4: capacity 32, gpu.count the 8 physical GPUs, product -SHARED."""
    return f.node(name, gpus=32, labels={
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED",
        "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"})


@pytest.mark.parametrize("odd", [_rebooting, _joining, _mig_single, _shared])
def test_normal_life_is_not_a_lost_gpu(odd: Any) -> None:
    configmap = f.load("configmap-default-mig-parted-config.json")
    nodes = [_count_node("gpu-a", 8), _count_node("gpu-b", 8), odd("gpu-c")]
    pods = [p for n in POOL_NODES for p in f.healthy_pods(n)]
    snap = SnapshotBuilder(DomainThresholds()).build(
        f.objects(nodes, pods, configmaps=[configmap]), f.T0)
    assert "gpu-count-dropped" not in {x.code for x in snap.findings}


def test_a_shared_node_short_of_a_gpu_is_still_compared_with_its_pool() -> None:
    shared = _shared("gpu-c")
    shared["metadata"]["labels"]["nvidia.com/gpu.count"] = "7"
    snap = build({}, [_count_node("gpu-a", 8), _count_node("gpu-b", 8), shared])
    assert only(snap, "gpu-count-dropped", "gpu-c").message.startswith("7 GPUs where its 2")


def test_a_pool_of_one_and_other_instance_types_are_not_compared() -> None:
    small = _count_node("gpu-c", 4, **{"node.kubernetes.io/instance-type": "a3-highgpu-4g"})
    snap = build({}, [_count_node("gpu-a", 8), small])
    assert "gpu-count-dropped" not in {x.code for x in snap.findings}


def test_a_replaced_node_with_all_new_uuids_has_lost_nothing() -> None:
    gone = tuple(GpuId(i, f"GPU-old-{i}") for i in range(8))
    snap = build({"gpu-a": GpuHealth(8, gone=gone)}, [_count_node("gpu-a", 8)])
    assert "gpu-count-dropped" not in {x.code for x in snap.findings}


# ---------------------------------------------------------------- thresholds
@pytest.mark.parametrize(("field", "value", "said"), [
    ("pcie_replays_per_minute", -1.0, ">= 0"),
    ("health_window_minutes", 0.0, "above 0"),
    ("throttle_fraction", 1.5, "at most 1"),
    ("throttle_temp_c", float("nan"), "finite"),
])
def test_bad_health_thresholds_are_refused(field: str, value: float, said: str) -> None:
    problem = threshold_problem(DomainThresholds(**{field: value}))
    assert problem is not None and said in problem and (field in problem)
    assert threshold_problem(DomainThresholds()) is None


def test_the_fleet_counts_gpus_with_health_findings() -> None:
    """Warning or worse, each GPU once: GPU 2's replays and GPU 3's remap on one node, a
    correctable-only GPU (info) not counted, the control node none."""
    snap = build(sick(CounterRise(2, H.PCIE_REPLAY, 3000, 600.0),
                      CounterRise(3, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 3600.0),
                      CounterRise(3, H.PCIE_REPLAY, 3000, 600.0),
                      CounterRise(5, H.CORRECTABLE_REMAPPED_ROWS, 1, 3600.0)))
    assert snap.counts.gpus_with_health_findings == 2


# ---------------------------------------------------------------- summary and timeline
def test_health_findings_reach_the_timeline_and_the_handoff_summary() -> None:
    """A rise the previous read did not show is a timeline event on its node, at once, and
    the handoff summary lists it under its severity with its hint; cleared when it stops."""
    from gputui.domain.summary import SummaryInput, build_summary
    from gputui.domain.timeline import derive_events

    builder = SnapshotBuilder(DomainThresholds())
    quiet = build({SICK: healthy(), CONTROL: healthy()}, builder=builder)
    loud = build(sick(CounterRise(2, H.PCIE_REPLAY, 3000, 600.0),
                      CounterRise(3, H.UNCORRECTABLE_REMAPPED_ROWS, 1, 3600.0)),
                 builder=builder)
    raised = [(e.node, e.text.split(":")[0], e.severity) for e in derive_events(quiet, loud,
                                                                                 f.T0)]
    assert (SICK, "gpu-memory-error", Severity.CRITICAL) in raised
    assert (SICK, "pcie-replays", Severity.WARNING) in raised
    summary = build_summary(SummaryInput(loud, f.T0))
    critical = summary[summary.index("Critical"):summary.index("Warning")]
    assert "gpu-memory-error" in critical and "reset the GPU" in critical
    assert "pcie-replays" in summary[summary.index("Warning"):]
    cleared = derive_events(loud, build({SICK: healthy(), CONTROL: healthy()},
                                        builder=builder), f.T0 + 60)
    texts = " ".join(e.text for e in cleared if e.node == SICK)
    assert "gpu-memory-error cleared" in texts and "pcie-replays cleared" in texts
