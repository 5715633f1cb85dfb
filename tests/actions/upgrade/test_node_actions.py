"""Per-node driver-upgrade actions (hold, release, request, retry) on the emulated cluster.

The emulated upgrade controller honours the skip label, the requested annotation and a
relabel from upgrade-failed as upstream does, so each test checks the stored change and the
controller's answer to it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Risk
from gputui.actions.upgrade_node import HoldNode, ReleaseNode, RequestUpgrade, RetryFailed
from tests.actions.upgrade.helpers import SKIP, STATE, Cluster, apply, plan_of

SCENARIO = """summary: three H100 nodes, every node may upgrade at once
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 0, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 3, gpu: H100-80GB, gpusPerNode: 8}
"""
REQUESTED = "nvidia.com/gpu-driver-upgrade-requested"


def _moves(cluster: Cluster, node: str) -> list[str]:
    prefix = "Successfully updated node state label to "
    return [e.message[len(prefix):] for e in cluster.sim.core.list_namespaced_event("default").items
            if e.involved_object.name == node and e.message.startswith(prefix)]


def _driver_version(cluster: Cluster, node: str) -> str:
    pods = cluster.sim.core.list_pod_for_all_namespaces(
        field_selector=f"spec.nodeName={node}", label_selector="app=nvidia-driver-daemonset")
    return ",".join(p.spec.containers[0].image.rsplit(":", 1)[-1] for p in pods.items)


def _new_version(cluster: Cluster, version: str = "580.82.07") -> None:
    cluster.sim.custom.patch_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy",
        {"spec": {"driver": {"version": version}}})


@pytest.fixture
def cluster(start_sim: Any, tmp_path: Path) -> Cluster:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    made = Cluster(start_sim(str(path), speed=200), tmp_path)
    made.nodes = made.sim.operator.world.pool_members["h100"]  # type: ignore[attr-defined]
    made.sim.wait_for(lambda: all(made.state(n) == "upgrade-done" for n in made.nodes),
                      600, "nodes upgrade-done")
    return made


def test_a_held_node_waits_while_the_others_roll_and_goes_once_released(
        cluster: Cluster) -> None:
    held, *others = cluster.nodes  # type: ignore[attr-defined]
    plan = plan_of(HoldNode(), cluster, [held])
    assert plan.risk is Risk.SAFE and plan.changes[0].body == {
        "metadata": {"labels": {SKIP: "true"}}}
    assert plan.changes[0].kubectl == f"kubectl label node {held} {SKIP}=true --overwrite"
    assert apply(HoldNode(), plan, cluster)[0].ok
    assert cluster.labels(held)[SKIP] == "true"
    assert plan_of(HoldNode(), cluster, [held]).blocked == f"{held} is already held"
    _new_version(cluster)
    cluster.sim.wait_for(lambda: all(_driver_version(cluster, n).startswith("580.82.07")
                                     and cluster.state(n) == "upgrade-done" for n in others),
                         3600, "the other nodes upgraded")
    assert cluster.state(held) == "upgrade-required"
    assert _driver_version(cluster, held).startswith("570.172.08")
    release = plan_of(ReleaseNode(), cluster, [held])
    assert release.risk is Risk.DESTRUCTIVE
    assert any("starts its driver upgrade" in line for line in release.impact)
    assert apply(ReleaseNode(), release, cluster)[0].ok
    assert SKIP not in cluster.labels(held)
    cluster.sim.wait_for(lambda: cluster.state(held) == "upgrade-done"
                         and _driver_version(cluster, held).startswith("580.82.07"),
                         3600, "the released node upgraded")


def test_request_annotation_reruns_an_up_to_date_node(cluster: Cluster) -> None:
    node = cluster.nodes[0]  # type: ignore[attr-defined]
    plan = plan_of(RequestUpgrade(), cluster, [node])
    assert plan.changes[0].body == {"metadata": {"annotations": {REQUESTED: "true"}}}
    before = len(_moves(cluster, node))
    assert apply(RequestUpgrade(), plan, cluster)[0].ok
    cluster.sim.wait_for(lambda: "upgrade-required" in _moves(cluster, node)[before:]
                         and cluster.state(node) == "upgrade-done", 3600,
                         "the requested node went through the upgrade")
    annotations = cluster.sim.core.read_node(node).metadata.annotations or {}
    assert REQUESTED not in annotations


def test_request_is_blocked_when_autoupgrade_is_off(cluster: Cluster) -> None:
    cluster.sim.custom.patch_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy",
        {"spec": {"driver": {"upgradePolicy": {"autoUpgrade": False}}}})
    plan = plan_of(RequestUpgrade(), cluster, [cluster.nodes[0]])  # type: ignore[attr-defined]
    assert plan.blocked and "autoUpgrade is off" in plan.blocked


FAILED = """summary: one node's new driver crash-loops
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 0, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 2, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 5s, action: crashloop, node: h100/1, reason: kernel-headers, nextStart: true}
  - {at: 10s, action: driver-version, version: 580.82.07}
"""


def test_retry_relabels_a_failed_node_and_says_finished_steps_are_skipped(
        start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "failed.yaml"
    path.write_text(FAILED)
    cluster = Cluster(start_sim(str(path), speed=600), tmp_path)
    node = cluster.sim.node("h100/1")
    cluster.sim.wait_for(lambda: cluster.state(node) == "upgrade-failed", 7200, "failed")
    healthy = cluster.sim.node("h100/0")
    blocked = plan_of(RetryFailed(), cluster, [healthy])
    assert blocked.blocked and "is not upgrade-failed" in blocked.blocked
    plan = plan_of(RetryFailed(), cluster, [node])
    assert plan.changes[0].patch_type == "json"
    assert plan.changes[0].body[0]["op"] == "test"
    assert any("steps already done are skipped" in step for step in plan.steps)
    (story,) = plan.impact
    assert "failed in pod-restart-required" in story and "already cordoned" in story
    before = len(_moves(cluster, node))
    assert apply(RetryFailed(), plan, cluster)[0].ok
    # the controller takes it from upgrade-required again (events are the controller's)
    cluster.sim.wait_for(lambda: "cordon-required" in _moves(cluster, node)[before:], 600,
                         "picked up again from upgrade-required")
    # a stale retry (the node is no longer upgrade-failed) is refused by the server's test op
    cluster.sim.core.patch_node(node, {"metadata": {"labels": {STATE: "upgrade-done"}}})
    result = RetryFailed().apply(plan, cluster.writer, lambda _: None, threading.Event())
    assert not result.ok and result.error and "testing value" in result.error
