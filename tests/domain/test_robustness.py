"""Half-filled or odd objects must never crash the builder (the UI would go stale)."""

from __future__ import annotations

from gputui.domain.inputs import ClusterObjects
from gputui.domain.selectors import matches, selector_from_label_selector
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.timefmt import duration
from tests.domain import factory as f


def test_skeleton_objects_build() -> None:
    objs = ClusterObjects(
        nodes={"bare": {"metadata": {"name": "bare"}}},
        pods={("gpu-operator", "p"): {"metadata": {"name": "p", "namespace": "gpu-operator",
                                                   "labels": {"app": "nvidia-driver-daemonset"}},
                                      "spec": {"nodeName": "bare"}}},
        daemonsets={"nvidia-driver-daemonset": {"metadata": {"name": "nvidia-driver-daemonset"}}},
        cluster_policies=[{"metadata": {"name": "cp"}}],
        configmaps={("gpu-operator", "default-mig-parted-config"): {
            "metadata": {"name": "default-mig-parted-config", "namespace": "gpu-operator"},
            "data": {"config.yaml": "::: not yaml"}}},
        events=[{"reason": "GPUDriverUpgrade"}],
        operator_namespace="gpu-operator")
    snap = SnapshotBuilder().build(objs, f.T0)
    assert list(snap.nodes) == ["bare"]
    assert snap.cluster_policy.state == "notReady"


def test_odd_value_types() -> None:
    node = f.node(labels={"nvidia.com/gpu.count": "eight"})
    node["status"]["capacity"]["nvidia.com/gpu"] = "1k"
    cp = f.cluster_policy(**f.upgrade_policy(maxParallelUpgrades="2", maxUnavailable=3,
                                             autoUpgrade="true"))
    snap = SnapshotBuilder().build(f.objects([node], f.healthy_pods(), policies=[cp]), f.T0)
    assert snap.nodes[f.NODE].gpu_count == 0
    assert snap.upgrade.policy is not None and snap.upgrade.policy.max_unavailable == "3"
    assert snap.upgrade.max_parallel == 2


def test_upgrade_since_falls_back_to_matching_event() -> None:
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "drain-required"})
    event = f.upgrade_event(f.NODE, "Successfully updated node state label to drain-required",
                            f.T0 - 3 * 3600)
    snap = SnapshotBuilder().build(f.objects([node], f.healthy_pods(), events=[event]), f.T0)
    assert snap.upgrade.nodes[f.NODE].since == f.T0 - 3 * 3600
    assert [x.code for x in snap.findings] == ["upgrade-stalled"]


def test_selectors() -> None:
    labels = {"app": "trainer", "tier": "gold"}
    assert matches("app=trainer", labels) and matches("app==trainer,tier!=silver", labels)
    assert matches("tier in (gold, platinum)", labels) and not matches("tier notin (gold)", labels)
    assert matches("app", labels) and matches("!missing", labels) and not matches("!app", labels)
    assert matches("", labels)
    assert selector_from_label_selector({"matchLabels": {"b": "2", "a": "1"}}) == "a=1,b=2"


def test_durations() -> None:
    assert [duration(s) for s in (-5, 45, 600, 31 * 3600, 4 * 86400)] == [
        "0 s", "45 s", "10 min", "31 h", "4 d"]
