"""Metrics findings: XIDs graded by meaning and age, missing GPUs, failed row remaps."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain.findings_metrics import clock_phrase, xid_node_findings
from gputui.domain.inputs import WHEN_UNKNOWN, GpuHealth, XidEvent
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DomainThresholds
from gputui.domain.xid import XIDS, xid_info, xid_meaning
from tests.domain import factory as f


@pytest.fixture(autouse=True)
def _utc_clock(utc: None) -> None:
    """"Before 12:00 yesterday" and such print in UTC."""


def build(lookback: float = 60.0, **kw: Any) -> ClusterSnapshot:
    builder = SnapshotBuilder(DomainThresholds(xid_lookback_minutes=lookback))
    return builder.build(f.objects([f.node()], f.healthy_pods(), **kw), f.T0)


def only(snap: ClusterSnapshot, code: str) -> Finding:
    found = [x for x in snap.findings if x.code == code]
    assert len(found) == 1, [(x.code, x.message) for x in snap.findings]
    return found[0]


def test_recent_xid_has_its_meanings_severity_and_action() -> None:
    snap = build(xids={f.NODE: [XidEvent(gpu=3, xid=79, when=f.T0 - 300)]})
    x = only(snap, "xid-error")
    assert x.message == "GPU 3: XID 79 (GPU has fallen off the bus) 5 min ago"
    assert x.severity is Severity.CRITICAL and x.pane == "metrics" and x.subject == "gpu3"
    assert "reboot" in x.hint and "RMA" in x.hint
    assert snap.nodes[f.NODE].worst is Severity.CRITICAL


def test_xid_older_than_the_lookback_is_info() -> None:
    """A week-old XID 48 is still in every scrape; it must not fail ``check`` forever."""
    x = only(build(xids={f.NODE: [XidEvent(gpu=0, xid=48, when=f.T0 - 7200)]}), "xid-error")
    assert x.severity is Severity.INFO
    assert x.message.startswith(f"GPU 0: last XID 48 ({xid_meaning(48)}), 2 h ago")
    assert "60 min lookback" in x.hint and "not counted as current" in x.hint
    # a wider lookback makes the same XID current again
    wide = only(build(lookback=180, xids={f.NODE: [XidEvent(0, 48, f.T0 - 7200)]}), "xid-error")
    assert wide.severity is Severity.CRITICAL


def test_xid_known_only_to_predate_the_history() -> None:
    event = XidEvent(gpu=1, xid=48, when=f.T0 - 3600, before=True)
    x = only(build(xids={f.NODE: [event]}), "xid-error")
    assert x.severity is Severity.INFO
    assert x.message == (f"GPU 1: last XID 48 ({xid_meaning(48)}), "
                         f"before {clock_phrase(f.T0 - 3600, f.T0)}")


@pytest.mark.parametrize("when", [WHEN_UNKNOWN, -1.0])
def test_xid_of_unknown_time_is_info_and_says_so(when: float) -> None:
    x = only(build(xids={f.NODE: [XidEvent(gpu=3, xid=79, when=when)]}), "xid-error")
    assert x.severity is Severity.INFO and "time unknown" in x.message and " ago" not in x.message


def test_xid_of_known_time_wins_over_unknown_on_one_gpu() -> None:
    xids = {f.NODE: [XidEvent(gpu=3, xid=79, when=f.T0 - 300),
                     XidEvent(gpu=3, xid=48, when=WHEN_UNKNOWN)]}
    assert "XID 79" in only(build(xids=xids), "xid-error").message


def test_application_xids_are_info_even_when_recent() -> None:
    [x] = xid_node_findings("n1", [XidEvent(0, 13, f.T0 - 10)], f.T0)
    assert x.severity is Severity.INFO and "check the application" in x.hint.lower()


def test_xid_table_covers_the_catalogue_codes_asked_for() -> None:
    for code in (13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120):
        info = XIDS[code]
        assert info.meaning and info.action
    assert xid_info(48).severity is Severity.CRITICAL and "RMA" in xid_info(48).action
    assert xid_info(63).severity is Severity.WARNING
    assert xid_meaning(147) == "NVLink error"
    assert "unlisted" in xid_meaning(9999)


def test_clock_phrase() -> None:
    now = 1_764_504_000.0  # 2025-11-30 12:00 UTC
    assert clock_phrase(now - 3600, now) == "11:00"
    assert clock_phrase(now - 86400, now) == "12:00 yesterday"
    assert clock_phrase(now - 5 * 86400, now) == "2025-11-25 12:00"


def test_gpu_missing_when_metrics_report_fewer_gpus() -> None:
    x = only(build(gpu_health={f.NODE: GpuHealth(gpus_reported=7)}), "gpu-missing")
    assert x.severity is Severity.CRITICAL and "7 of the node's 8 GPUs" in x.message
    assert not [y for y in build(gpu_health={f.NODE: GpuHealth(8)}).findings]


def test_no_gpu_missing_while_mig_reconfigures() -> None:
    node = f.node(labels={"nvidia.com/mig.config.state": "pending"})
    builder = SnapshotBuilder(DomainThresholds())
    snap = builder.build(f.objects([node], f.healthy_pods(),
                                   gpu_health={f.NODE: GpuHealth(gpus_reported=6)}), f.T0)
    assert "gpu-missing" not in {x.code for x in snap.findings}


def test_row_remap_failure() -> None:
    x = only(build(gpu_health={f.NODE: GpuHealth(8, row_remap_failed=(2,))}),
             "row-remap-failure")
    assert x.severity is Severity.CRITICAL and x.subject == "gpu2" and "RMA" in x.hint


def _mig_node(strategy: str, config: str, product: str, count: int,
              resources: dict[str, str]) -> dict[str, Any]:
    """An H100 node after mig-manager applied ``config``, labelled as GFD does under
    ``strategy`` (k8s-device-plugin ``internal/lm/mig-strategy.go``)."""
    node = f.node(labels={"nvidia.com/mig.config": config,
                          "nvidia.com/mig.config.state": "success",
                          "nvidia.com/mig.strategy": strategy, "nvidia.com/mig.capable": "true",
                          "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(count)})
    node["status"]["capacity"] = {**node["status"]["capacity"], **resources}
    node["status"]["allocatable"] = {**node["status"]["allocatable"], **resources}
    return node


def _mig_build(node: dict[str, Any], reported: int, extra_yaml: str = "") -> ClusterSnapshot:
    configmap = f.load("configmap-default-mig-parted-config.json")
    configmap["data"]["config.yaml"] += extra_yaml
    objs = f.objects([node], f.healthy_pods(), configmaps=[configmap],
                     gpu_health={f.NODE: GpuHealth(gpus_reported=reported)})
    return SnapshotBuilder(DomainThresholds()).build(objs, f.T0)


H100 = "NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize(("strategy", "config", "product", "count", "resources"), [
    # single: GFD's MIG labeler overrides gpu.count with the MIG devices (8 x 7)
    ("single", "all-1g.10gb", f"{H100}-MIG-1g.10gb", 56, {"nvidia.com/gpu": "56"}),
    # mixed: gpu.count stays the full GPUs; MIG devices are nvidia.com/mig-<profile>
    ("mixed", "all-1g.10gb", H100, 8, {"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "56"}),
    # none: MIG is ignored, full GPUs only
    ("none", "all-disabled", H100, 8, {"nvidia.com/gpu": "8"}),
    # mixed, all-enabled without instances: dcgm-exporter reports the 8 GPUs as whole GPUs
    ("mixed", "all-enabled", H100, 8, {"nvidia.com/gpu": "0"}),
])
def test_gpu_missing_compares_physical_gpus_per_strategy(
        strategy: str, config: str, product: str, count: int,
        resources: dict[str, str]) -> None:
    """The metrics count physical GPUs (distinct ``gpu`` indices): 8 reported on an 8-GPU
    node is healthy whatever ``gpu.count`` counts; 7 of 8 is one GPU gone."""
    node = _mig_node(strategy, config, product, count, resources)
    assert "gpu-missing" not in {x.code for x in _mig_build(node, 8).findings}
    missing = only(_mig_build(node, 7), "gpu-missing")
    assert missing.message == "metrics report 7 of the node's 8 GPUs"


def test_gpu_missing_not_raised_when_the_physical_count_is_unknown() -> None:
    """Under ``single`` with a config that gives GPUs different device counts, or an
    invalid layout (``-MIG-INVALID``, ``gpu.count`` 0), no label says how many GPUs the
    node has: unknown is not a fault."""
    # valid under single (every GPU MIG-enabled, one profile) but 7 devices on some GPUs and
    # 3 on others: 40 devices could be 4x7 + 4x3 or other splits, so the count is unknown
    uneven = ("\n  uneven-1g:\n    - devices: [0, 1, 2, 3]\n      mig-enabled: true\n"
              "      mig-devices: {\"1g.10gb\": 7}\n    - devices: [4, 5, 6, 7]\n"
              "      mig-enabled: true\n      mig-devices: {\"1g.10gb\": 3}\n")
    node = _mig_node("single", "uneven-1g", f"{H100}-MIG-1g.10gb", 40, {"nvidia.com/gpu": "40"})
    snap = _mig_build(node, 2, uneven)
    assert snap.mig.nodes[f.NODE].applied == "uneven-1g"
    assert "gpu-missing" not in {x.code for x in snap.findings}
    invalid = _mig_node("single", "all-enabled", f"{H100}-MIG-INVALID", 0,
                        {"nvidia.com/gpu": "0"})
    assert "gpu-missing" not in {x.code for x in _mig_build(invalid, 0).findings}


@pytest.mark.parametrize(("strategy", "product", "count", "resources", "total", "mig"), [
    ("single", f"{H100}-MIG-1g.10gb", 56, {"nvidia.com/gpu": "56"}, 56, 56),
    ("mixed", H100, 8, {"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "56"}, 56, 56),
    ("none", H100, 8, {"nvidia.com/gpu": "8"}, 8, 0),
])
def test_header_counts_say_which_gpus_are_mig_devices(
        strategy: str, product: str, count: int, resources: dict[str, str], total: int,
        mig: int) -> None:
    """The header's GPU total counts schedulable units; of them, the MIG devices are
    counted apart so the header and the fleet line can say so."""
    config = "all-disabled" if strategy == "none" else "all-1g.10gb"
    counts = _mig_build(_mig_node(strategy, config, product, count, resources), 8).counts
    assert (counts.gpus_total, counts.mig_devices) == (total, mig)


def test_fleet_from_nodes_counts_whole_gpus_and_mig_devices() -> None:
    """A MIG GPU has no utilisation of its own (NVML gives none in MIG mode): its instances
    count, each by its graphics engine activity, as the header counts MIG devices."""
    from gputui.domain.metrics import GpuMetrics, NodeMetrics, fleet_from_nodes

    whole = tuple(GpuMetrics(i, util=((f.T0, 90.0 if i < 2 else 0.0),)) for i in range(4))
    instances = tuple(GpuMetrics(0, instance=str(gi), profile="3g.40gb",
                                 util=((f.T0, 80.0 if gi == 1 else 0.0),)) for gi in (1, 2))
    fleet = fleet_from_nodes("2 nodes on screen", {"a": NodeMetrics("a", whole),
                                                   "b": NodeMetrics("b", instances)}, f.T0)
    assert (fleet.gpus, fleet.busy, fleet.idle, fleet.mig_devices) == (6, 3, 3, 2)
