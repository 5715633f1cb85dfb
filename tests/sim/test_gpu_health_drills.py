"""GPU-health drills (issue 26 section 6): what the emulated dcgm-exporter serves under each
fault, read at fixed emulated instants (the clock paused there, so values are exact).

The faults follow dcgm-exporter's counters (``etc/default-counters.csv``; the opt-in ones
commented out there) and what a real GPU does: a fatal XID is followed by XID 45 on a GPU a
pod uses, a GPU gone from the bus is not enumerated after the node's reboot.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from gputui.sim.cluster import EmulatedCluster
from gputui.sim.operator.dcgmhealth import OPT_IN_NAMES
from gputui.sim.operator.hardware import gpu_uuid, pci_bus_id
from tests.helpers import free_port
from tests.sim.promtext import Sample, parse

#: the instants (emulated seconds after start) the gpu-health cluster is read at
INSTANTS = (840.5, 842.0, 960.0, 1020.0)


def _run_to(cluster: EmulatedCluster, seconds: float) -> None:
    """Let the emulated clock run to ``seconds`` after the scenario's start and stop there."""
    start = cluster.operator.timeline.start
    cluster.clock.pause_at(start + seconds)
    guard = time.monotonic() + 240
    while cluster.clock.now() < start + seconds:
        if time.monotonic() > guard:
            pytest.fail(f"the emulated clock did not reach {seconds} s")
        time.sleep(0.05)


def _scrape(port: int, node: str) -> list[Sample]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics/{node}", timeout=10) as answer:
        return parse(answer.read().decode())[1]


def _by_gpu(samples: list[Sample], name: str) -> dict[str, Sample]:
    return {s.labels["gpu"]: s for s in samples if s.name == name}


def _values(samples: list[Sample], name: str) -> dict[str, float]:
    return {gpu: s.value for gpu, s in _by_gpu(samples, name).items()}


@pytest.fixture(scope="module")
def health() -> Iterator[dict[str, Any]]:
    """The ``gpu-health`` cluster read at each of :data:`INSTANTS`: every node's scrape,
    plus the Node objects at the last instant."""
    port = free_port()
    cluster = EmulatedCluster("gpu-health", speed=300, exporters_port=port)
    cluster.clock.pause_at(cluster.clock.now())
    cluster.start()
    try:
        members = list(cluster.operator.world.pool_members["h100"])
        seen: dict[float, dict[str, list[Sample]]] = {}
        for instant in INSTANTS:
            _run_to(cluster, instant)
            seen[instant] = {name: _scrape(port, name) for name in members}
        nodes = {name: cluster.store.get("nodes", name, None) for name in members}
        yield {"members": members, "seen": seen, "nodes": nodes}
    finally:
        cluster.stop()


def test_xid_95_on_a_busy_gpu_is_followed_by_45(health: dict[str, Any]) -> None:
    node = health["members"][1]
    first, later = health["seen"][840.5][node], health["seen"][842.0][node]
    xid = _by_gpu(first, "DCGM_FI_DEV_XID_ERRORS")["2"]
    assert xid.value == 95 and xid.labels["err_msg"] == "Uncontained ECC error"
    assert xid.labels["pod"].startswith("trainer-gpt-") and xid.labels["namespace"] == "ml-training"
    masked = _by_gpu(later, "DCGM_FI_DEV_XID_ERRORS")["2"]
    assert masked.value == 45 and masked.labels["err_code"] == "45"
    # the opt-in count keeps both within its 5-minute window
    counts = {(s.labels.get("xid"), s.value) for s in later
              if s.name == "DCGM_EXP_XID_ERRORS_COUNT" and s.labels["gpu"] == "2"}
    assert counts == {("95", 1.0), ("45", 1.0)}
    assert all(s.labels["window_size_in_ms"] == "300000" for s in later
               if s.name == "DCGM_EXP_XID_ERRORS_COUNT")
    # the other GPUs: one zero series without an xid label, as upstream
    other = [s for s in later if s.name == "DCGM_EXP_XID_ERRORS_COUNT" and s.labels["gpu"] == "0"]
    assert [(s.value, "xid" in s.labels) for s in other] == [(0.0, False)]


def test_uncorrectable_remapped_rows_go_from_0_to_1_and_stay(health: dict[str, Any]) -> None:
    node = health["members"][5]
    for instant in INSTANTS:
        rows = _values(health["seen"][instant][node], "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")
        assert rows == {**{str(i): 0 for i in range(8)}, "5": 1}
        dbe = _values(health["seen"][instant][node], "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")
        assert dbe["5"] == 1 and sum(dbe.values()) == 1


def test_pcie_replays_rise_300_a_minute(health: dict[str, Any]) -> None:
    node = health["members"][2]
    at = {i: _values(health["seen"][i][node], "DCGM_FI_DEV_PCIE_REPLAY_COUNTER") for i in INSTANTS}
    assert at[960.0]["1"] == (960 - 120) * 5
    assert at[1020.0]["1"] - at[960.0]["1"] == 300
    assert all(v == 0 for gpu, v in at[1020.0].items() if gpu != "1")


def test_nvlink_crc_flit_errors_rise_on_the_opt_in_counter(health: dict[str, Any]) -> None:
    node = health["members"][3]
    name = "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"
    series = [_values(health["seen"][i][node], name)["6"] for i in INSTANTS]
    assert series == sorted(series) and series[-1] > series[0] > 0
    assert _values(health["seen"][1020.0][node], "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL")["6"] > 0


def test_thermal_throttle_runs_hot_and_slow_half_of_every_second(health: dict[str, Any]) -> None:
    node = health["members"][4]
    samples = health["seen"][960.0][node]
    assert _values(samples, "DCGM_FI_DEV_THERMAL_VIOLATION")["0"] == (960 - 60) * 0.5 * 1e9
    assert _values(samples, "DCGM_FI_DEV_GPU_TEMP")["0"] == 92
    clocks = _values(samples, "DCGM_FI_DEV_SM_CLOCK")
    assert clocks["0"] == 900 and {v for g, v in clocks.items() if g != "0"} == {1980}
    events = [(s.labels.get("clock_event"), s.value) for s in samples
              if s.name == "DCGM_EXP_CLOCK_EVENTS_COUNT" and s.labels["gpu"] == "0"]
    assert events == [("hw_thermal", 5.0)]


def test_a_gpu_off_the_bus_is_gone_after_the_reboot(health: dict[str, Any]) -> None:
    node = health["members"][0]
    samples = health["seen"][960.0][node]
    util = _by_gpu(samples, "DCGM_FI_DEV_GPU_UTIL")
    assert sorted(util) == [str(i) for i in range(7)]
    uuids = {s.labels["UUID"] for s in util.values()}
    assert gpu_uuid(node, 3) not in uuids and gpu_uuid(node, 7) in uuids
    # renumbered in PCI order: GPU 3 now is the one in slot 4, its bus id unchanged
    assert util["3"].labels["pci_bus_id"] == pci_bus_id(4) and util["3"].labels["device"] == "nvidia3"
    # after the reboot the exporter starts afresh: no XID left
    assert set(_values(samples, "DCGM_FI_DEV_XID_ERRORS").values()) == {0}
    obj = health["nodes"][node]
    assert obj["metadata"]["labels"]["nvidia.com/gpu.count"] == "7"
    assert obj["status"]["capacity"]["nvidia.com/gpu"] == "7"
    assert obj["status"]["allocatable"]["nvidia.com/gpu"] == "7"
    sibling = health["nodes"][health["members"][6]]
    assert sibling["metadata"]["labels"]["nvidia.com/gpu.count"] == "8"


def test_the_control_node_reports_nothing_wrong(health: dict[str, Any]) -> None:
    samples = health["seen"][1020.0][health["members"][6]]
    for name in ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                 "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                 "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_THERMAL_VIOLATION",
                 "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"):
        assert set(_values(samples, name).values()) == {0}, name
    assert set(_values(samples, "DCGM_FI_DEV_SM_CLOCK").values()) == {1980}
    assert all("pod" in s.labels for s in samples if s.name == "DCGM_FI_DEV_GPU_UTIL")


def test_counters_never_go_down_between_scrapes(health: dict[str, Any]) -> None:
    counters = {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_THERMAL_VIOLATION",
                "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"}
    for node in health["members"]:
        before: dict[tuple[str, str], float] = {}
        for instant in INSTANTS:
            for sample in health["seen"][instant][node]:
                key = (sample.name, sample.labels["UUID"])
                if sample.name in counters:
                    assert sample.value >= before.get(key, 0), (node, key, instant)
                    before[key] = sample.value


def test_opt_in_counters_are_served_only_where_asked(start_sim: Any) -> None:
    port = free_port()
    sim = start_sim("healthy", speed=50, exporters_port=port,
                    faults="nvlink:h100/2:1@1s,pcie:h100/0:4@1s")
    node, other = sim.node("h100/2"), sim.node("h100/0")
    flits = "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"
    sim.wait_for(lambda: _values(_scrape(port, node), flits).get("1", 0) > 0, 600,
                 "NVLink CRC flit errors rising")
    names = {s.name for s in _scrape(port, node)}
    assert names & OPT_IN_NAMES == {n for n in OPT_IN_NAMES if n.startswith("DCGM_FI_DEV_NVLINK_")}
    elsewhere = _scrape(port, other)
    assert not {s.name for s in elsewhere} & OPT_IN_NAMES
    assert _values(elsewhere, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER")["4"] > 0


def test_a_fatal_xid_is_followed_by_45_only_where_a_pod_runs(start_sim: Any) -> None:
    """XID 45 is the driver cleaning up the contexts the error killed: none on an idle GPU,
    and ``xid-alone`` raises the XID by itself (what the older drills expect)."""
    port = free_port()
    faults = ",".join(f"xid:h100/{i}:0:48@1s" for i in range(4)) + ",xid-alone:h100/1:5:94@1s"
    sim = start_sim("healthy", speed=20, exporters_port=port, faults=faults)
    nodes = [sim.node(f"h100/{i}") for i in range(4)]

    def expected(xid: Sample) -> float:
        return 45 if "pod" in xid.labels else 48

    def settled() -> dict[str, list[Sample]] | None:
        # every GPU 0 past its XID 48, and each busy one past the 45 that follows it (the
        # 45 comes a moment after the 48: a poll between the two on one node is not the end)
        seen = {n: _scrape(port, n) for n in nodes}
        xids = [_by_gpu(s, "DCGM_FI_DEV_XID_ERRORS").get("0") for s in seen.values()]
        done = all(x is not None and x.value == expected(x) for x in xids)
        return seen if done and {x.value for x in xids if x is not None} == {45, 48} else None
    seen = sim.wait_for(settled, 600, "XID 45 after XID 48 on the busy GPUs")
    for samples in seen.values():
        xid = _by_gpu(samples, "DCGM_FI_DEV_XID_ERRORS")["0"]
        assert xid.value == expected(xid)
    alone = _by_gpu(seen[nodes[1]], "DCGM_FI_DEV_XID_ERRORS")["5"]
    assert alone.value == 94 and "pod" in alone.labels


def test_a_reboot_brings_a_fallen_gpu_back_and_resets_volatile_counters(start_sim: Any) -> None:
    port = free_port()
    sim = start_sim("healthy", speed=50, exporters_port=port, paused=True,
                    faults="xid:h100/3:2:79@1s,pcie:h100/3:1@1s,rows:h100/3:4@1s,reboot:h100/3@2m")
    node = sim.node("h100/3")
    _run_to(sim.cluster, 90.0)  # before the reboot: the exporter answers
    before = _values(_scrape(port, node), "DCGM_FI_DEV_PCIE_REPLAY_COUNTER")["1"]
    assert before == 89 * 5
    sim.resume()

    def back() -> list[Sample] | None:
        try:
            samples = _scrape(port, node)
        except OSError:  # 503 while the node is down and its exporter pod restarts
            return None
        return samples if len(_by_gpu(samples, "DCGM_FI_DEV_GPU_UTIL")) == 8 else None
    samples = sim.wait_for(back, 900, "all 8 GPUs exported again after the reboot")
    assert set(_values(samples, "DCGM_FI_DEV_XID_ERRORS").values()) == {0}
    # counted again from the boot (2 m + 150 s), not from the fault 1 s in
    replays = _values(samples, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER")["1"]
    assert replays <= 5 * (sim.emulated() - 269)
    assert _values(samples, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")["4"] == 1
    assert sim.core.read_node(node).metadata.labels["nvidia.com/gpu.count"] == "8"


def test_the_fault_grammar_and_the_scenario_keys_are_strict() -> None:
    from gputui.sim.scenario import ScenarioError, parse_faults, parse_scenario

    events = parse_faults("rows:h100/1:2,pcie:h100/2:0@1m,nvlink:h100/3:4,"
                          "throttle:h100/4:1:power@2m,offbus:h100/0:3,reboot:h100/0@3m,"
                          "xid-alone:h100/1:0:95")
    assert [(e.action, e.at) for e in events] == [
        ("rows", 0), ("pcie-replays", 60), ("nvlink-errors", 0), ("throttle", 120),
        ("gpu-off-bus", 0), ("reboot", 180), ("xid", 0)]
    assert events[3].args == {"node": "h100/4", "gpu": 1, "cause": "power"}
    assert events[5].args == {"node": "h100/0"} and events[6].args["follow"] is False
    with pytest.raises(ScenarioError, match="cause must be one of thermal, power"):
        parse_faults("throttle:h100/4:1:fan")
    with pytest.raises(ScenarioError, match="expected rows:NODE:GPU"):
        parse_faults("rows:h100/1")
    with pytest.raises(ScenarioError, match="unknown opt-in metric 'DCGM_FI_DEV_BOGUS'"):
        parse_scenario("x", {"summary": "s", "exporterMetrics": ["DCGM_FI_DEV_BOGUS"]})
    with pytest.raises(ScenarioError, match="cause must be one of"):
        parse_scenario("x", {"timeline": [{"action": "throttle", "node": "h/0", "cause": "x"}]})


def test_wear_is_computed_when_read_and_the_boot_renumbers_what_is_left() -> None:
    from gputui.sim.operator import gpufaults as F
    from gputui.sim.operator.hardware import model
    from gputui.sim.operator.runtime import NodeRun

    run = NodeRun("n", "p", model("H100-80GB"), 8, "k", False)
    gpu = run.gpus[2]
    F.raise_xid(gpu, 95, 100.0, follow=True)
    assert [F.last_xid(gpu, t) for t in (99.0, 100.0, 100.5, 101.0)] == [0, 95, 95, 45]
    assert F.xid_counts(gpu, 101.0) == {95: 1, 45: 1} and F.xid_counts(gpu, 400.5) == {45: 1}
    F.degrade_pcie(gpu, 100.0)
    assert gpu.wear.pcie.value(160.0, gpu.wear.boot) == 300
    F.remap_rows(run.gpus[5], 100.0, pre_ampere=False)
    F.off_bus(run.gpus[3], 120.0)
    F.boot(run, 500.0)
    assert run.gpu_count == 7 and [g.index for g in run.gpus] == list(range(7))
    assert [g.slot for g in run.gpus] == [0, 1, 2, 4, 5, 6, 7]
    assert gpu.xid == 0 and F.last_xid(gpu, 600.0) == 0 and gpu.wear.pcie.value(560.0, 500.0) == 300
    assert run.gpus[4].wear.uncorrectable_rows == 1  # slot 5: rows live in the InfoROM
    t4 = NodeRun("t", "p", model("T4"), 4, "k", False)
    F.remap_rows(t4.gpus[0], 0.0, pre_ampere=True)
    assert (t4.gpus[0].wear.retired_dbe, t4.gpus[0].wear.uncorrectable_rows) == (1, 0)


POWER = """summary: one busy H100 node, power violations exported
exporterMetrics: [DCGM_FI_DEV_POWER_VIOLATION, DCGM_EXP_CLOCK_EVENTS_COUNT]
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-4c2e, count: 1, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer, namespace: ml-training, pool: h100, count: 1, gpus: 8, labels: {app: t}}
timeline:
  - {at: 1m, action: throttle, node: h100/0, gpu: 7, cause: power}
"""


def test_a_power_throttle_sits_at_the_board_limit(tmp_path: Any) -> None:
    path = tmp_path / "power.yaml"
    path.write_text(POWER)
    port = free_port()
    cluster = EmulatedCluster(str(path), speed=300, exporters_port=port)
    cluster.clock.pause_at(cluster.clock.now())
    cluster.start()
    try:
        _run_to(cluster, 300.0)
        samples = _scrape(port, cluster.operator.world.pool_members["h100"][0])
    finally:
        cluster.stop()
    assert _values(samples, "DCGM_FI_DEV_POWER_VIOLATION") == {
        **{str(i): 0 for i in range(7)}, "7": 240 * 0.5 * 1e9}
    assert _values(samples, "DCGM_FI_DEV_POWER_USAGE")["7"] == 700
    assert _values(samples, "DCGM_FI_DEV_POWER_USAGE")["6"] < 700
    assert _values(samples, "DCGM_FI_DEV_SM_CLOCK")["7"] == 900
    assert _values(samples, "DCGM_FI_DEV_GPU_TEMP")["7"] < 87  # power, not heat
    assert not any(s.name == "DCGM_FI_DEV_THERMAL_VIOLATION" for s in samples)
    events = [(s.labels.get("clock_event"), s.value) for s in samples
              if s.name == "DCGM_EXP_CLOCK_EVENTS_COUNT" and s.labels["gpu"] == "7"]
    assert events == [("power_cap", 4.0)]
