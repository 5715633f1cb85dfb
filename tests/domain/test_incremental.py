"""Incremental builds answer exactly what a full build answers, and the fixes that came with
making them fast (pod-to-node rule, validator behind a failed driver, shared MIG configs)."""

from __future__ import annotations

import copy
import random
from dataclasses import replace

import pytest

from gputui.domain.fleet import unhealthy_gpus, usable
from gputui.domain.inputs import ClusterObjects, XidEvent
from gputui.domain.mig import MigConfigCache, node_mig_view
from gputui.domain.model import ClusterSnapshot, Severity, SnapshotCounts, StageStatus
from gputui.domain.podindex import pod_node_name
from gputui.domain.snapshot import SnapshotBuilder, sort_findings
from gputui.domain.upgrade import build_upgrade_view
from gputui.domain.upgrade_events import last_events
from tests.domain import factory as f
from tests.domain.factory import NAMES, Json, rolling_upgrade, rolling_upgrade_objects


def _full(objs: ClusterObjects, now: float) -> ClusterSnapshot:
    return SnapshotBuilder().build(objs, now)


def _mutate(rng: random.Random, nodes: list[Json], pods: list[Json],
            events: list[Json]) -> set[str]:
    """One random change of the kind a watch delivers; returns the nodes it touches."""
    kind = rng.choice(["label", "cordon", "pod", "add-pod", "drop-pod", "event", "drop-node",
                       "add-node"])
    index = rng.randrange(len(nodes))
    name = nodes[index]["metadata"]["name"]
    if kind in ("label", "cordon"):
        node = copy.deepcopy(nodes[index])
        if kind == "label":
            node["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = rng.choice(
                ["upgrade-done", "upgrade-required", "drain-required", "upgrade-failed"])
        else:
            node["spec"]["unschedulable"] = not node["spec"].get("unschedulable", False)
        nodes[index] = node
        return {name}
    if kind == "event":
        events.append(f.upgrade_event(name, "label to drain-required", f.T0 + len(events)))
        return {name}
    if kind == "drop-node":
        del nodes[index]
        return {name}
    if kind == "add-node":
        new = f"gpu-new-{len(nodes)}-{rng.randrange(1000)}"
        nodes.append(f.node(new))
        pods.extend(f.healthy_pods(new))
        return {new}
    on_node = [i for i, p in enumerate(pods) if pod_node_name(p) == name]
    if kind == "add-pod" or not on_node:
        pods.append(f.workload(f"extra-{rng.randrange(10**6)}", name, gpus=1))
    elif kind == "drop-pod":
        del pods[rng.choice(on_node)]
    else:
        at = rng.choice(on_node)
        pods[at] = f.operand_pod("driver", name, crash_in="nvidia-driver-ctr",
                                 restarts=rng.randrange(20),
                                 suffix=pods[at]["metadata"]["name"][-6:])
    return {name}


def _as_before(snap: ClusterSnapshot, objs: ClusterObjects, now: float) -> None:
    """The fleet-wide parts equal what the pre-incremental builder computed from all nodes."""
    views = list(snap.nodes.values())
    cluster = [x for x in snap.findings if x.node is None]
    assert snap.findings == sort_findings([x for v in views for x in v.findings] + cluster)
    assert snap.upgrade == build_upgrade_view(
        views, snap.upgrade.policy, snap.cluster_policy.sandbox_workloads, snap.daemonsets,
        last_events(objs.events), now)
    cache = MigConfigCache()
    assert dict(snap.mig.nodes) == {
        v.name: node_mig_view(v, snap.operator_namespace, snap.cluster_policy.mig_config_name,
                              objs.configmaps, cache)
        for v in views if v.mig_capable or v.mig_config}
    assert snap.counts == SnapshotCounts(
        gpu_nodes=len(views), nodes_ready=sum(v.ready for v in views),
        nodes_cordoned=sum(v.cordoned for v in views),
        gpus_total=sum(max(v.resources.capacity, v.gpu_count) for v in views),
        # a NotReady node's GPUs are not counted allocatable (fleet.usable, issue 29 item 10)
        gpus_allocatable=sum(usable(v, v.resources.allocatable) for v in views),
        nodes_with_findings=sum(bool(v.findings) for v in views),
        upgrades_in_progress=snap.upgrade.in_progress,
        gpus_with_health_findings=sum(unhealthy_gpus(v) for v in views))


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_incremental_builds_equal_full_builds(seed: int) -> None:
    # one clock for the whole run: reused views keep the ages they were built with (the
    # UI computes ages from the ``since`` fields), so only same-time builds compare equal
    rng = random.Random(seed)
    nodes, pods, events = rolling_upgrade()
    builder = SnapshotBuilder()
    now = f.T0
    builder.build(rolling_upgrade_objects(nodes, pods, events), now)
    for step in range(60):
        touched = _mutate(rng, nodes, pods, events)
        xids = {NAMES[2]: [XidEvent(0, 79, now - 30)]} if step % 7 == 3 else {}
        objs = rolling_upgrade_objects(nodes, pods, events, xids=xids)
        incremental = builder.build(objs, now, changed_nodes=touched)
        assert incremental == _full(objs, now), f"step {step}"
        _as_before(incremental, objs, now)
        assert builder.build(objs, now, changed_nodes=set()) == incremental


def test_nothing_changed_reuses_every_part() -> None:
    nodes, pods, events = rolling_upgrade()
    objs = rolling_upgrade_objects(nodes, pods, events)
    builder = SnapshotBuilder()
    first = builder.build(objs, f.T0)
    again = builder.build(objs, f.T0 + 1, changed_nodes=set())
    assert again.nodes is first.nodes and again.findings is first.findings
    assert again.mig.nodes is first.mig.nodes and again.upgrade.lanes is first.upgrade.lanes


def test_pod_node_name_rules() -> None:
    assert pod_node_name({"spec": {"nodeName": "a"}}) == "a"
    cuda = f.load("pod-cuda-validator-pending.json")
    assert pod_node_name(cuda) == f.NODE
    pending_ds_pod = {"spec": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}}}
    assert pod_node_name(pending_ds_pod) == "b"
    assert pod_node_name({"spec": {}}) is None and pod_node_name({}) is None


def test_selector_bound_pod_change_rebuilds_its_node_unannounced() -> None:
    # the CUDA validator pod carries no nodeName: a cache that tracks nodeName only cannot
    # name its node, so the builder compares such pods on every build
    validator = f.load("pod-validator-cuda-validation.json")
    cuda = f.load("pod-cuda-validator-pending.json")
    pods = [p for p in f.healthy_pods() if "operator-validator" not in p["metadata"]["name"]]
    builder = SnapshotBuilder()
    builder.build(f.objects([f.node()], pods + [validator, cuda]), f.T0)
    cuda = copy.deepcopy(cuda)
    cuda["status"]["conditions"][0]["message"] = "0/1 nodes: node(s) had untolerated taint"
    snap = builder.build(f.objects([f.node()], pods + [validator, cuda]), f.T0 + 5,
                         changed_nodes=set())
    stuck = [x for x in snap.findings if x.code == "validator-stuck"]
    assert stuck and "untolerated taint" in stuck[0].hint


def test_unscheduled_daemonset_pod_shows_on_its_node() -> None:
    # a DaemonSet pod the scheduler cannot place has no nodeName, only the controller's
    # node affinity: the stage says "not scheduled" instead of "no pod on this node"
    driver = f.operand_pod("driver", stuck_in="k8s-driver-manager")
    del driver["spec"]["nodeName"]
    driver["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f.NODE]}]}]}}}
    driver["status"] = {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/1 nodes are available: 1 Insufficient memory."}]}
    pods = [p for p in f.healthy_pods() if "driver" not in p["metadata"]["name"]] + [driver]
    stage = SnapshotBuilder().build(f.objects([f.node()], pods), f.T0).nodes[f.NODE] \
        .pipeline.stage("driver")
    assert stage is not None and stage.status is StageStatus.PROGRESSING
    assert "not scheduled" in stage.detail and "Insufficient memory" in stage.detail


def test_validator_behind_a_failed_driver_is_only_info() -> None:
    # JOURNEYS #1: the driver crash-loops, the validator waits in driver-validation; the
    # driver is the cause, so the validator's finding must not compete with it
    pods = f.healthy_pods(overrides={
        "driver": {"crash_in": "nvidia-driver-ctr", "restarts": 14},
        "operator-validator": {"stuck_in": "driver-validation", "start": f.T0 - 3600}})
    snap = SnapshotBuilder().build(f.objects([f.node()], pods), f.T0)
    first = snap.findings[0]
    assert first.code == "driver-pod-failing" and first.severity is Severity.CRITICAL
    stuck = [x for x in snap.findings if x.code == "validator-stuck"]
    assert len(stuck) == 1 and stuck[0].severity is Severity.INFO
    assert "failed driver stage" in stuck[0].message and "driver" in stuck[0].hint


def test_validator_stuck_alone_is_still_a_warning() -> None:
    pods = f.healthy_pods(overrides={
        "operator-validator": {"stuck_in": "driver-validation", "start": f.T0 - 3600}})
    snap = SnapshotBuilder().build(f.objects([f.node()], pods), f.T0)
    assert [(x.code, x.severity) for x in snap.findings] == [
        ("validator-stuck", Severity.WARNING)]


def test_shared_mig_config_change_reaches_unchanged_nodes() -> None:
    # the offered configs quoted by mig-config-failed come from the default ConfigMap: a new
    # version of it must reach the node's findings even when no node is named as changed
    node = f.node(labels={"nvidia.com/mig.config": "all-9g.99gb",
                          "nvidia.com/mig.config.state": "failed"})
    configmap = f.load("configmap-default-mig-parted-config.json")
    builder = SnapshotBuilder()
    first = builder.build(f.objects([node], f.healthy_pods(), configmaps=[configmap]), f.T0)
    assert "all-9g.99gb" in next(x for x in first.findings if x.code == "mig-config-failed") \
        .message
    newer = copy.deepcopy(configmap)
    newer["metadata"]["resourceVersion"] = "5121"
    newer["data"]["config.yaml"] = "version: v1\nmig-configs:\n  all-9g.99gb: []\n"
    snap = builder.build(f.objects([node], f.healthy_pods(), configmaps=[newer]), f.T0 + 5,
                         changed_nodes=set())
    failed = next(x for x in snap.findings if x.code == "mig-config-failed")
    assert "no such config" not in failed.message
    assert snap.mig.nodes[f.NODE].available_configs == ("all-9g.99gb",)
    assert replace(snap, generated_at=first.generated_at) != first


def test_pod_index_finds_added_pods_wherever_they_are() -> None:
    from gputui.domain.podindex import PodIndex

    def pod(name: str, node: str) -> Json:
        return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"nodeName": node}}

    pods = {("ns", f"p{i}"): pod(f"p{i}", f"n{i % 50}") for i in range(1000)}
    index = PodIndex()
    assert len(index.update(pods, None)) == 50
    at_end = {**pods, ("ns", "new"): pod("new", "n7")}
    assert index.update(at_end, {"n7"}) == {"n7"}
    assert "new" in [p.name for p in index.pods_of("n7")]
    items = list(at_end.items())
    in_middle = dict(items[:10] + [(("ns", "mid"), pod("mid", "n3"))] + items[10:])
    assert index.update(in_middle, set()) == {"n3"}  # unannounced, still found by count
    del in_middle[("ns", "p3")]
    assert index.update(in_middle, {"n3"}) == {"n3"}
    assert "p3" not in [p.name for p in index.pods_of("n3")]
    assert index.update(in_middle, set()) == set()
