"""PodDisruptionBudgets read through real HTTP from the emulated API server (issue 29 item 4).

Budgets are made and moved with the real Kubernetes client, as an operator's tooling would;
the one-shot read and the live source carry them (reduced) to the domain, whose
``upgrade-failed`` hint then names the budget that held the drain. kubectl lists the same
budgets at the path gputui reads, so the emulated server answers both alike.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from gputui.domain.readgaps import health_unknowable, read_gaps
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from tests.sources.helpers import cluster_policy, node, pod, wait_for

NS = "gpu-operator"
HELD = "trainer-llama-bmrsx"
DRAIN_FAILED = (f'Failed to drain the node, error when evicting pods/"{HELD}" -n "ml": global '
                "timeout reached: 5m0s")


def seed(cluster: EmulatedCluster) -> None:
    """A node whose drain timed out on the trainer's eviction, and the trainer on it."""
    store = cluster.store
    store.create("nodes", node("gpu-0", labels={
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"}))
    store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    store.create("pods", pod(NS, "nvidia-driver-daemonset-a", "gpu-0",
                             labels={"app": "nvidia-driver-daemonset"}))
    store.create("pods", pod("ml", HELD, "gpu-0", gpus=8, labels={"app": "trainer"}))
    for name in ("ml", "serving"):
        store.create("namespaces", {"metadata": {"name": name}, "status": {"phase": "Active"}})
    store.create("events", {
        "metadata": {"name": "gpu-0.drain", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "gpu-0"}, "reason": "GPUDriverUpgrade",
        "type": "Warning", "message": DRAIN_FAILED, "lastTimestamp": store.clock.rfc3339()})


def policy_api(kubeconfig: Path) -> Any:
    return client.PolicyV1Api(config.new_client_from_config(str(kubeconfig)))


def make_budgets(kubeconfig: Path) -> None:
    """The trainer's budget (out of disruptions) and one of other pods, made and counted as
    the disruption controller would write it, through the real client."""
    api = policy_api(kubeconfig)
    api.create_namespaced_pod_disruption_budget("ml", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "trainer-pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "trainer"}}}},
        _preload_content=False)
    api.create_namespaced_pod_disruption_budget("serving", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
        "spec": {"maxUnavailable": "10%", "selector": {"matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["web"]}]}}}, _preload_content=False)
    count(kubeconfig, allowed=0, healthy=1)


def count(kubeconfig: Path, allowed: int, healthy: int) -> None:
    """The trainer budget's status, as the disruption controller writes it."""
    policy_api(kubeconfig).patch_namespaced_pod_disruption_budget_status(
        "trainer-pdb", "ml", {"status": {
            "disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": 1,
            "expectedPods": healthy, "observedGeneration": 1,
            "disruptedPods": {"trainer-llama-old": "2026-12-01T10:00:00Z"}}},
        _preload_content=False)


def failed_hint(snapshot: Any) -> str:
    (found,) = [f for f in snapshot.findings if f.code == "upgrade-failed"]
    return str(found.hint)


def test_the_one_shot_read_carries_the_budgets_reduced(
        cluster: EmulatedCluster, kubeconfig: Path, kubectl_bin: str) -> None:
    seed(cluster)
    make_budgets(kubeconfig)
    objects = read_objects(load_target(str(kubeconfig)))
    budgets = {(b["metadata"]["namespace"], b["metadata"]["name"]): b
               for b in objects.disruption_budgets or ()}
    assert sorted(budgets) == [("ml", "trainer-pdb"), ("serving", "web")]
    trainer = budgets["ml", "trainer-pdb"]
    assert "managedFields" not in trainer["metadata"] and trainer["metadata"]["resourceVersion"]
    assert trainer["spec"] == {"minAvailable": 1,
                               "selector": {"matchLabels": {"app": "trainer"}}}
    assert trainer["status"] == {"disruptionsAllowed": 0, "currentHealthy": 1,
                                 "desiredHealthy": 1, "expectedPods": 1}
    assert budgets["serving", "web"]["spec"]["selector"]["matchExpressions"][0]["key"] == "tier"
    # kubectl, asking the same server at the same path, lists the same budgets
    listed = subprocess.run(
        [kubectl_bin, "--kubeconfig", str(kubeconfig), "get", "pdb", "-A", "--no-headers",
         "-o", "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,"
               "ALLOWED:.status.disruptionsAllowed"],
        capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert listed == ["ml", "trainer-pdb", "0", "serving", "web", "<none>"]
    hint = failed_hint(SnapshotBuilder().build(objects, cluster.clock.now()))
    assert ("was never evicted: PodDisruptionBudget ml/trainer-pdb (app=trainer) allows 0 "
            "disruptions (needs 1 healthy pod, has 1)") in hint
    assert "serving/web" not in hint


def test_budgets_refused_are_a_gap_not_a_failure(
        cluster: EmulatedCluster, kubeconfig: Path, forbidden_paths: set[str]) -> None:
    """A viewer without ``list poddisruptionbudgets``: the rest is read, the gap is named
    (optional: ``check`` does not exit 2 for it), and the hint says the budget is unknown."""
    seed(cluster)
    make_budgets(kubeconfig)
    forbidden_paths.add("/poddisruptionbudgets")
    objects = read_objects(load_target(str(kubeconfig)))
    assert objects.unreadable == {"poddisruptionbudgets": "forbidden"}
    assert objects.disruption_budgets == () and objects.nodes and objects.pods
    snapshot = SnapshotBuilder().build(objects, cluster.clock.now())
    (gap,) = read_gaps(snapshot.unreadable)
    assert (gap.resource, gap.why, gap.required) == ("poddisruptionbudgets", "403", False)
    assert not health_unknowable(snapshot.unreadable)
    hint = failed_hint(snapshot)
    assert "which budget is not known: PodDisruptionBudgets could not be read (403)" in hint
    assert "kubectl get pdb -n ml" in hint


@pytest.fixture
def live(kubeconfig: Path) -> Iterator[tuple[KubeSource, list[Any]]]:
    """The live source with the domain's builder, its snapshots as they come."""
    snapshots: list[Any] = []
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, backoff_cap=0.3)
    source.start(snapshots.append, lambda status: None)
    try:
        yield source, snapshots
    finally:
        source.stop()


def test_the_live_hint_follows_the_budget_through_the_watch(
        cluster: EmulatedCluster, kubeconfig: Path,
        live: tuple[KubeSource, list[Any]]) -> None:
    """Only the budget's status moves (the trainer's peers came back): the watch brings it,
    and the failed node's hint says the budget allows a disruption now."""
    seed(cluster)
    make_budgets(kubeconfig)
    _, snapshots = live

    def hint_saying(words: str) -> str | None:
        last = snapshots[-1] if snapshots else None
        if last is None or last.loading or not any(
                f.code == "upgrade-failed" for f in last.findings):
            return None
        hint = failed_hint(last)
        return hint if words in hint else None

    wait_for(lambda: hint_saying("allows 0 disruptions"), what="the budget in the hint")
    count(kubeconfig, allowed=1, healthy=2)
    hint = wait_for(lambda: hint_saying("allows 1 disruption"), what="the budget's new status")
    assert "Its budget allows a disruption now, so retry" in hint
