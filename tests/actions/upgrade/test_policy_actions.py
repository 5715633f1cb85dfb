"""Cluster-wide driver-upgrade actions against the emulated cluster, through KubeWriter.

Each test plans from a snapshot read over HTTP, dry-runs (nothing stored), applies, and
checks the stored ClusterPolicy; the emulated operator's reaction is checked where it matters
(a new version starts a roll; autoUpgrade off clears the state labels).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Risk
from gputui.actions.canary import CanaryUpgrade
from gputui.actions.upgrade_limits import (
    SetDrain,
    SetMaxParallel,
    SetMaxUnavailable,
    SetPodDeletion,
    SetWaitForCompletion,
)
from gputui.actions.upgrade_node import HoldNode, RequestUpgrade
from gputui.actions.upgrade_policy import SetDriverVersion, ToggleAutoUpgrade
from tests.actions.upgrade.helpers import STATE, Cluster, apply, plan_of

SCENARIO = """summary: four H100 nodes, autoUpgrade on, one node at a time
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 50%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 4, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer, namespace: ml-training, pool: h100, count: 2, gpus: 8,
     labels: {app: trainer}, runSeconds: 2d, startedAgo: 1h, pdb: true}
"""


@pytest.fixture
def cluster(start_sim: Any, tmp_path: Path) -> Cluster:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    made = Cluster(start_sim(str(path), speed=100), tmp_path)
    made.sim.wait_for(lambda: all(made.state(n) == "upgrade-done" for n in made.sim.operator
                                  .world.pool_members["h100"]), 600, "nodes upgrade-done")
    return made


def test_set_version_dry_run_stores_nothing_then_apply_starts_the_roll(cluster: Cluster) -> None:
    action = SetDriverVersion()
    plan = plan_of(action, cluster, params={"version": "580.82.07"})
    assert plan.risk is Risk.CLUSTER_WIDE and plan.confirm_text == "580.82.07"
    (change,) = plan.changes
    assert change.kind == "ClusterPolicy" and change.name == "cluster-policy"
    assert change.body == {"spec": {"driver": {"version": "580.82.07"}}}
    assert change.resource_version == cluster.policy()["metadata"]["resourceVersion"]
    assert "kubectl patch clusterpolicies.nvidia.com cluster-policy --type merge" in change.kubectl
    assert any("every one of the 4 nodes will roll, up to 1 at a time" in line
               for line in plan.impact)
    cluster.writer.patch(change, dry_run=True)
    assert cluster.policy()["spec"]["driver"]["version"] == "570.172.08"
    result, _ = apply(action, plan, cluster)
    assert result.ok, result.error
    assert cluster.policy()["spec"]["driver"]["version"] == "580.82.07"
    nodes = cluster.sim.operator.world.pool_members["h100"]
    cluster.sim.wait_for(lambda: any(cluster.state(n) not in ("upgrade-done", "")
                                     for n in nodes), 600, "the roll started")


def test_a_policy_changed_since_the_plan_is_a_409_with_a_fresh_plan(cluster: Cluster) -> None:
    action = SetDriverVersion()
    plan = plan_of(action, cluster, params={"version": "580.82.07"})
    cluster.sim.custom.patch_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy",
        {"spec": {"driver": {"upgradePolicy": {"maxParallelUpgrades": 2}}}})
    result = action.apply(plan, cluster.writer, lambda _: None, threading.Event())
    assert not result.ok and "409" in (result.error or "")
    assert cluster.policy()["spec"]["driver"]["version"] == "570.172.08"
    assert result.replan is not None
    fresh = result.replan.changes[0]
    assert fresh.resource_version == cluster.policy()["metadata"]["resourceVersion"]
    assert any("up to 2 at a time" in line for line in result.replan.impact)
    again, _ = apply(action, result.replan, cluster)
    assert again.ok and cluster.policy()["spec"]["driver"]["version"] == "580.82.07"


def test_same_version_and_bad_versions_are_refused_before_anything_is_sent(
        cluster: Cluster) -> None:
    action = SetDriverVersion()
    assert "already has version" in (plan_of(action, cluster, params={
        "version": "570.172.08"}).blocked or "")
    spec = action.params[0]
    assert spec.validate is not None
    assert spec.validate("580 82") and spec.validate("") and spec.validate("580.82.07") is None
    assert spec.default is not None and spec.default(cluster.snapshot(), []) == "570.172.08"


def test_max_parallel_plan_shows_unavailability_against_max_unavailable(
        cluster: Cluster) -> None:
    action = SetMaxParallel()
    plan = plan_of(action, cluster, params={"value": "4"})
    assert plan.confirm_text == "4"
    assert any("against maxUnavailable 2 (50% of 4 nodes)" in line for line in plan.impact)
    assert any("maxUnavailable caps it: at most 2 node(s)" in w for w in plan.warnings)
    result, _ = apply(action, plan, cluster)
    assert result.ok and cluster.upgrade_policy()["maxParallelUpgrades"] == 4
    assert action.params[0].validate is not None
    assert action.params[0].validate("-1") and action.params[0].validate("two")


@pytest.mark.parametrize(("text", "stored"), [("3", 3), ("30%", "30%")])
def test_max_unavailable_is_sent_as_int_or_percent_string(
        cluster: Cluster, text: str, stored: Any) -> None:
    action = SetMaxUnavailable()
    result, _ = apply(action, plan_of(action, cluster, params={"value": text}), cluster)
    assert result.ok and cluster.upgrade_policy()["maxUnavailable"] == stored


@pytest.mark.parametrize("text", ["2.5%", "101%", "x", "-1", ""])
def test_max_unavailable_rejects_what_intstr_would_not_parse(cluster: Cluster, text: str) -> None:
    plan = plan_of(SetMaxUnavailable(), cluster, params={"value": text})
    assert plan.blocked and "neither a whole number nor a percentage" in plan.blocked


def test_wait_for_completion_pod_deletion_and_drain_are_stored(cluster: Cluster) -> None:
    wait = plan_of(SetWaitForCompletion(), cluster,
                   params={"podSelector": "app=trainer", "timeoutSeconds": "3600"})
    assert any("2 GPU pod(s) on 2 node(s) match now" in line for line in wait.impact)
    assert apply(SetWaitForCompletion(), wait, cluster)[0].ok
    deletion = plan_of(SetPodDeletion(), cluster, params={
        "force": "true", "deleteEmptyDir": "false", "timeoutSeconds": "600"})
    assert any(w.startswith("force:") for w in deletion.warnings)
    assert apply(SetPodDeletion(), deletion, cluster)[0].ok
    drain = plan_of(SetDrain(), cluster, params={
        "enable": "true", "force": "false", "podSelector": "tier=batch",
        "deleteEmptyDir": "true", "timeoutSeconds": "0"})
    assert apply(SetDrain(), drain, cluster)[0].ok
    stored = cluster.upgrade_policy()
    assert stored["waitForCompletion"] == {"podSelector": "app=trainer", "timeoutSeconds": 3600}
    assert stored["podDeletion"] == {"force": True, "deleteEmptyDir": False,
                                     "timeoutSeconds": 600}
    assert stored["drain"] == {"enable": True, "force": False, "deleteEmptyDir": True,
                               "podSelector": "tier=batch", "timeoutSeconds": 0}
    bad = plan_of(SetWaitForCompletion(), cluster,
                  params={"podSelector": "app trainer", "timeoutSeconds": "0"})
    assert bad.blocked and "not a valid label key" in bad.blocked


def test_autoupgrade_off_asks_for_the_context_and_clears_the_state_labels(
        cluster: Cluster) -> None:
    action = ToggleAutoUpgrade()
    plan = plan_of(action, cluster)
    assert plan.confirm_text == cluster.snapshot().context
    assert plan.changes[0].body == {"spec": {"driver": {"upgradePolicy": {"autoUpgrade": False}}}}
    assert apply(action, plan, cluster)[0].ok
    nodes = cluster.sim.operator.world.pool_members["h100"]
    cluster.sim.wait_for(lambda: all(STATE not in cluster.labels(n) for n in nodes), 600,
                         "state labels removed")
    back = plan_of(action, cluster)
    assert back.changes[0].body["spec"]["driver"]["upgradePolicy"]["autoUpgrade"] is True


def test_dry_run_of_every_upgrade_plan_stores_nothing(cluster: Cluster) -> None:
    nodes = cluster.sim.operator.world.pool_members["h100"]
    plans = [
        plan_of(SetDriverVersion(), cluster, params={"version": "580.82.07"}),
        plan_of(ToggleAutoUpgrade(), cluster),
        plan_of(SetMaxParallel(), cluster, params={"value": "3"}),
        plan_of(SetMaxUnavailable(), cluster, params={"value": "1"}),
        plan_of(SetDrain(), cluster, params={"enable": "true", "force": "false",
                                             "podSelector": "", "deleteEmptyDir": "false",
                                             "timeoutSeconds": "60"}),
        plan_of(HoldNode(), cluster, nodes),
        plan_of(RequestUpgrade(), cluster, nodes[:1]),
        plan_of(CanaryUpgrade(), cluster, nodes[:1], {"version": "580.82.07"}),
    ]
    answers = [cluster.writer.patch(c, dry_run=True) for p in plans for c in p.changes]
    assert len(answers) == sum(len(p.changes) for p in plans) >= 12
    # the emulated controllers keep writing status, so the check is on what we sent
    policy = cluster.policy()["spec"]["driver"]
    assert policy["version"] == "570.172.08" and policy["upgradePolicy"]["autoUpgrade"] is True
    for node in nodes:
        labels = cluster.labels(node)
        annotations = cluster.sim.core.read_node(node).metadata.annotations or {}
        assert "nvidia.com/gpu-driver-upgrade.skip" not in labels
        assert "nvidia.com/gpu-driver-upgrade-requested" not in annotations
