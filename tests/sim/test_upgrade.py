"""Driver upgrades: states in order, within maxParallelUpgrades/maxUnavailable, jobs waited for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sim.helpers import STATE, UpgradeWatch

ORDER = ["upgrade-required", "cordon-required", "wait-for-jobs-required", "pod-deletion-required",
         "pod-restart-required", "validation-required", "uncordon-required", "upgrade-done"]
SCENARIO = """summary: six nodes, two at a time, one trainer to wait for
clusterPolicy:
  spec:
    driver:
      upgradePolicy:
        autoUpgrade: true
        maxParallelUpgrades: 2
        maxUnavailable: 3
        waitForCompletion: {podSelector: app=trainer}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 6, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer, namespace: ml, pool: h100, count: 1, gpus: 8, labels: {app: trainer},
     runSeconds: 40m}
timeline:  # late enough for the test's recorder to be in place (kubernetes import is slow)
  - {at: 10m, action: driver-version, version: 580.82.07}
"""


def test_upgrade_walks_states_in_order_within_limits(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "upgrade.yaml"
    path.write_text(SCENARIO)
    sim = start_sim(str(path), speed=300, paused=True)
    rec = UpgradeWatch(sim)
    sim.resume()
    trainer = sim.wait_for(lambda: [p for p in sim.core.list_namespaced_pod("ml").items
                                    if p.spec.node_name], 60, "trainer scheduled")[0]
    trainer_node = trainer.spec.node_name

    def all_done() -> bool:
        nodes = sim.core.list_node(label_selector="nvidia.com/gpu.present=true").items
        return all(n.metadata.labels.get(STATE) == "upgrade-done" and not n.spec.unschedulable
                   and rec.history.get(n.metadata.name, [""])[-1] == "upgrade-done"
                   and len(rec.history.get(n.metadata.name, [])) > 2 for n in nodes)

    sim.wait_for(all_done, 6 * 3600, "every node upgraded")
    assert rec.max_in_progress <= 2 and rec.max_unavailable <= 3
    for node, states in rec.history.items():
        walked = [s for s in states if s in ORDER]
        start = walked.index("upgrade-required")
        assert walked[start:] == ORDER, (node, states)
    # the trainer's node waited in wait-for-jobs-required until the job finished
    entries = [e for e in rec.log if e[1] == trainer_node]
    waiting = entries.index(("node", trainer_node, "wait-for-jobs-required"))
    leaving = entries.index(("node", trainer_node, "pod-deletion-required"))
    assert ("trainer", trainer_node, "Succeeded") in entries[waiting:leaving]
    assert ("trainer", trainer_node, "Deleted") not in entries


def test_upgrade_uses_new_revision_and_reports_events(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "upgrade.yaml"
    path.write_text(SCENARIO.replace("runSeconds: 40m", "runSeconds: 11m"))
    sim = start_sim(str(path), speed=300)
    revisions = lambda: sim.apps.list_namespaced_controller_revision(
        "gpu-operator", label_selector="app=nvidia-driver-daemonset").items
    sim.wait_for(lambda: len(revisions()) == 2, 1200, "new driver revision")
    newest = max(revisions(), key=lambda r: r.revision).metadata.labels["controller-revision-hash"]

    def converged() -> bool:
        pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-driver-daemonset").items
        return len(pods) == 6 and all(p.metadata.labels["controller-revision-hash"] == newest
                                      and p.status.phase == "Running" for p in pods) and all(
            n.metadata.labels.get(STATE) == "upgrade-done"
            for n in sim.core.list_node(label_selector="nvidia.com/gpu.present=true").items)

    sim.wait_for(converged, 6 * 3600, "driver pods on the new revision")
    pod = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-driver-daemonset").items[0]
    assert pod.spec.containers[0].image.endswith(":580.82.07-ubuntu22.04")
    events = sim.core.list_namespaced_event("default").items
    upgrade = [e for e in events if e.reason == "GPUDriverUpgrade"]
    assert upgrade and all(e.involved_object.kind == "Node" for e in upgrade)
    assert any(e.message == "Successfully updated node state label to cordon-required" for e in upgrade)
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["status"]["state"] == "ready"


WAITED = """summary: one node, a trainer the upgrade waits 2 min for
clusterPolicy:
  spec:
    driver:
      upgradePolicy:
        autoUpgrade: true
        maxParallelUpgrades: 1
        waitForCompletion: {podSelector: app=trainer, timeoutSeconds: 120}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 1, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer, namespace: ml, pool: h100, count: 1, gpus: 8, labels: {app: trainer},
     runSeconds: 2h}
timeline:
  - {at: 10m, action: driver-version, version: 580.82.07}
"""
WAIT_ANN = "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time"


def test_annotation_changes_are_recorded_as_upstream_does(start_sim: Any, tmp_path: Path) -> None:
    """Every successful ``ChangeNodeUpgradeAnnotation`` records "Successfully updated node
    annotation to %s=%s", a removal with the value ``null`` (k8s-operator-libs
    ``pkg/upgrade/node_upgrade_state_provider.go``). Was: the emulator recorded none."""
    path = tmp_path / "waited.yaml"
    path.write_text(WAITED)
    sim = start_sim(str(path), speed=300)
    node = sim.node("h100/0")
    messages = lambda: [e.message for e in sim.core.list_namespaced_event("default").items
                        if e.reason == "GPUDriverUpgrade" and e.involved_object.name == node]
    removed = f"Successfully updated node annotation to {WAIT_ANN}=null"
    sim.wait_for(lambda: removed in messages(), 3600, "the wait annotation removed")
    seen = messages()
    started = [m for m in seen if m.startswith(f"Successfully updated node annotation to {WAIT_ANN}=")
               and m != removed]
    assert len(started) == 1 and started[0].rsplit("=", 1)[1].isdigit()
    assert seen.index(started[0]) < seen.index(
        "Successfully updated node state label to pod-deletion-required") < seen.index(removed)


FAILING = """summary: the second node's new driver never builds
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 50%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 3, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 5s, action: crashloop, node: h100/0, reason: kernel-headers, nextStart: true}
  - {at: 10m, action: driver-version, version: 580.82.07}
"""


def test_crash_looping_driver_fails_and_holds_the_only_slot(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "failing.yaml"
    path.write_text(FAILING)
    sim = start_sim(str(path), speed=600)
    broken = sim.node("h100/0")
    state = lambda name: sim.core.read_node(name).metadata.labels.get(STATE)
    sim.wait_for(lambda: state(broken) == "upgrade-failed", 3 * 3600, "upgrade-failed")
    driver = next(p for p in sim.core.list_namespaced_pod(
        "gpu-operator", label_selector="app=nvidia-driver-daemonset").items if p.spec.node_name == broken)
    assert driver.status.container_statuses[0].restart_count > 10
    assert sim.core.read_node(broken).spec.unschedulable
    others = [n for n in sim.operator.world.pool_members["h100"] if n != broken]
    # a failed node keeps its slot: with maxParallelUpgrades 1 nothing else starts
    assert {state(n) for n in others} <= {"upgrade-required", "upgrade-done"}
    # retry by relabelling: it goes back through the machine (and fails again)
    sim.core.patch_node(broken, {"metadata": {"labels": {STATE: "upgrade-required"}}})
    sim.wait_for(lambda: state(broken) != "upgrade-required", 600, "retry picked up")


BLOCKED = """summary: a NotReady node's driver pod is unscheduled; then a new driver version
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 0, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 3, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 1m, action: driver-unscheduled, node: h100/2}
  - {at: 2m, action: driver-version, version: 580.82.07}
"""


def test_pending_driver_pod_without_a_node_does_not_stop_the_others(start_sim: Any,
                                                                   tmp_path: Path) -> None:
    """k8s-operator-libs ``pkg/upgrade/upgrade_state.go`` BuildState: the Pending driver pod
    with no node counts as owned (desired == owned) and is skipped, so the other nodes
    upgrade (this used to freeze every upgrade, gpu-operator #688)."""
    path = tmp_path / "blocked.yaml"
    path.write_text(BLOCKED)
    sim = start_sim(str(path), speed=300, paused=True)
    rec = UpgradeWatch(sim)
    sim.resume()
    stuck = sim.node("h100/2")
    others = [n for n in sim.operator.world.pool_members["h100"] if n != stuck]
    state = lambda name: sim.core.read_node(name).metadata.labels.get(STATE)
    sim.wait_for(lambda: all(state(n) == "upgrade-done" and "pod-restart-required" in
                             rec.history.get(n, []) for n in others), 4 * 3600,
                 "the others upgraded")
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-driver-daemonset").items
    pending = [p for p in pods if not p.spec.node_name]
    assert len(pending) == 1 and pending[0].status.phase == "Pending"
    driver = sim.apps.read_namespaced_daemon_set("nvidia-driver-daemonset", "gpu-operator")
    assert driver.status.desired_number_scheduled == 3 and len(pods) == 3
    # the node whose driver pod has no node is not in the managed set: never started
    assert "pod-restart-required" not in rec.history.get(stuck, [])


HOLD = """summary: one node cordoned by someone else, one held with the skip label
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 0, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 3, gpu: H100-80GB, gpusPerNode: 8,
     cordoned: 1}
timeline:
  - {at: 10m, action: driver-version, version: 580.82.07}
"""


def test_precordoned_node_stays_cordoned_and_skip_label_holds(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "hold.yaml"
    path.write_text(HOLD)
    sim = start_sim(str(path), speed=300, paused=True)  # the skip label goes on before 10m
    cordoned, held, free = sim.node("h100/0"), sim.node("h100/1"), sim.node("h100/2")
    assert sim.core.read_node(cordoned).spec.unschedulable
    sim.core.patch_node(held, {"metadata": {"labels": {"nvidia.com/gpu-driver-upgrade.skip": "true"}}})
    seen_initial: list[str] = []
    sim.cluster.store.watch("nodes", lambda e: seen_initial.append(e.obj["metadata"]["name"]) if (
        e.obj["metadata"].get("annotations") or {}).get(
        "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable") == "true" else None)
    sim.resume()
    state = lambda name: sim.core.read_node(name).metadata.labels.get(STATE)
    # done and its annotation dropped are two writes: read the node once both are in
    initial_kept = lambda name: "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable" \
        in (sim.core.read_node(name).metadata.annotations or {})
    sim.wait_for(lambda: state(free) == "upgrade-done" and state(cordoned) == "upgrade-done"
                 and len(sim.apps.list_namespaced_controller_revision(
                     "gpu-operator", label_selector="app=nvidia-driver-daemonset").items) == 2
                 and cordoned in seen_initial and not initial_kept(cordoned), 4 * 3600,
                 "both upgraded")
    node = sim.core.read_node(cordoned)
    assert node.spec.unschedulable  # cordoned before the upgrade: left cordoned
    assert "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable" not in (
        node.metadata.annotations or {})
    assert not sim.core.read_node(free).spec.unschedulable
    assert state(held) == "upgrade-required"
