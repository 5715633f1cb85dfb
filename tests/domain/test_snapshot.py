"""The snapshot builder: incremental rebuilds, thresholds crossing, counts, ordering."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gputui.domain import EMPTY_OBJECTS, EMPTY_SNAPSHOT
from gputui.domain.model import Severity, StageStatus
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f


def _three() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [f.node(n) for n in ("n-c", "n-a", "n-b")]
    pods = [p for n in ("n-a", "n-b", "n-c") for p in f.healthy_pods(n)]
    return nodes, pods


def test_nodes_in_stable_name_order_and_counts() -> None:
    nodes, pods = _three()
    snap = SnapshotBuilder().build(f.objects(nodes, pods), f.T0)
    assert list(snap.nodes) == ["n-a", "n-b", "n-c"]
    assert snap.counts.gpu_nodes == 3 and snap.counts.gpus_total == 24
    assert snap.counts.gpus_allocatable == 24 and snap.counts.nodes_ready == 3
    assert snap.operator_namespace == "gpu-operator" and snap.context == "prod-gke"
    node = snap.nodes["n-a"]
    assert node.pool == "h100-pool" and node.driver_version == "570.148.08"
    assert node.kernel == "6.1.112+" and node.product == "NVIDIA-H100-80GB-HBM3"
    assert node.resources.get("nvidia.com/gpu") is not None


def test_unchanged_nodes_are_reused() -> None:
    nodes, pods = _three()
    builder = SnapshotBuilder()
    first = builder.build(f.objects(nodes, pods), f.T0)
    nodes[0] = f.node("n-c", cordoned=True)
    second = builder.build(f.objects(nodes, pods), f.T0 + 5, changed_nodes={"n-c"})
    assert second.nodes["n-a"] is first.nodes["n-a"]
    assert second.nodes["n-c"] is not first.nodes["n-c"] and second.nodes["n-c"].cordoned
    third = builder.build(f.objects(nodes, pods), f.T0 + 10, changed_nodes=None)
    assert third.nodes["n-a"] is not second.nodes["n-a"]


def test_removed_node_disappears() -> None:
    nodes, pods = _three()
    builder = SnapshotBuilder()
    builder.build(f.objects(nodes, pods), f.T0)
    snap = builder.build(f.objects(nodes[1:], pods), f.T0 + 1, changed_nodes={"n-c"})
    assert list(snap.nodes) == ["n-a", "n-b"]


def test_policy_change_rebuilds_every_node() -> None:
    nodes, pods = _three()
    builder = SnapshotBuilder()
    first = builder.build(f.objects(nodes, pods), f.T0)
    cp = f.cluster_policy(spec={"driver": {"enabled": False}})
    second = builder.build(f.objects(nodes, pods, policies=[cp]), f.T0 + 1, changed_nodes=set())
    stage = second.nodes["n-a"].pipeline.stage("driver")
    assert stage is not None and stage.status is StageStatus.DISABLED
    assert second.nodes["n-a"] is not first.nodes["n-a"]


def test_threshold_crossing_rebuilds_an_untouched_node() -> None:
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "pending"}
    objs = f.objects([f.node(labels=labels)], f.healthy_pods(),
                     label_times={f.NODE: {"nvidia.com/mig.config.state": f.T0}})
    builder = SnapshotBuilder()
    assert builder.build(objs, f.T0 + 60).findings == ()
    still = builder.build(objs, f.T0 + 120, changed_nodes=set())
    assert still.findings == ()
    later = builder.build(objs, f.T0 + 11 * 60, changed_nodes=set())
    assert [x.code for x in later.findings] == ["mig-config-pending"]


def test_new_upgrade_event_rebuilds_node() -> None:
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"})
    builder = SnapshotBuilder()
    builder.build(f.objects([node], f.healthy_pods()), f.T0)
    event = f.upgrade_event(f.NODE, "Failed to drain the node", f.T0, "Warning")
    snap = builder.build(f.objects([node], f.healthy_pods(), events=[event]), f.T0 + 1,
                         changed_nodes=set())
    assert "Failed to drain" in snap.nodes[f.NODE].findings[0].message


@dataclass(frozen=True)
class SettingsLikeThresholds:
    upgrade_stalled_minutes: float = 30.0
    mig_pending_minutes: float = 1.0
    operand_not_ready_minutes: float = 10.0
    validator_stuck_minutes: float = 5.0
    driver_startup_minutes: float = 21.0
    node_not_ready_minutes: float = 5.0


def test_thresholds_from_any_object() -> None:
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "pending"}
    objs = f.objects([f.node(labels=labels)], f.healthy_pods(),
                     label_times={f.NODE: {"nvidia.com/mig.config.state": f.T0 - 120}})
    snap = SnapshotBuilder(SettingsLikeThresholds()).build(objs, f.T0)
    assert [x.code for x in snap.findings] == ["mig-config-pending"]


def test_gpu_pods_and_join_time() -> None:
    pods = f.healthy_pods() + [f.workload("trainer-0", gpus=4),
                               f.workload("done", phase="Succeeded")]
    node = SnapshotBuilder().build(f.objects([f.node()], pods), f.T0).nodes[f.NODE]
    assert [(p.name, p.gpus) for p in node.gpu_pods] == [("trainer-0", 4)]
    assert node.gpu_pods[0].labels["app"] == "trainer"
    # node created at T0 - 1 day; the validator's plugin-validation finished 10 s later
    assert node.created == f.T0 - 86400
    assert node.join_to_allocatable_seconds == 10.0


def test_worst_severity_per_node() -> None:
    snap = SnapshotBuilder().build(f.objects([f.node(allocatable=0)], f.healthy_pods()), f.T0)
    assert snap.nodes[f.NODE].worst is Severity.CRITICAL


def test_empty_input_gives_valid_snapshot() -> None:
    snap = SnapshotBuilder().build(EMPTY_OBJECTS, 0.0)
    assert snap.nodes == {} and snap.cluster_policy.state == "missing"
    assert EMPTY_SNAPSHOT.findings == () and EMPTY_SNAPSHOT.counts.gpu_nodes == 0


def test_daemonset_summary() -> None:
    ds = f.daemonset("nvidia-device-plugin-daemonset", desired=1)
    snap = SnapshotBuilder().build(f.objects([f.node()], f.healthy_pods(), daemonsets=[ds]), f.T0)
    [summary] = snap.daemonsets
    assert summary.operand == "device-plugin" and summary.unscheduled == 0
    assert summary.desired == summary.ready == 1
