"""The emulated upgrade controller against upstream's rules, one rule per test.

Each docstring names the k8s-operator-libs / gpu-operator file the rule comes from; the
expected walk is written from it, not from the emulator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sim.conftest import Sim
from tests.sim.helpers import STATE, UpgradeWatch

VALIDATION_START = "nvidia.com/gpu-driver-upgrade-validation-start-time"
TWO_NODES = """summary: two nodes, one at a time
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 2, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 10m, action: driver-version, version: 580.82.07}
"""


def _start(start_sim: Any, tmp_path: Path, body: str = TWO_NODES, paused: bool = False) -> Sim:
    path = tmp_path / "scenario.yaml"
    path.write_text(body)
    sim: Sim = start_sim(str(path), speed=300, paused=paused)
    return sim


def test_validation_without_a_validator_pod_waits_without_a_clock(start_sim: Any,
                                                                  tmp_path: Path) -> None:
    """k8s-operator-libs ``pkg/upgrade/validation_manager.go``: no validator pod on the node
    means "not done" without writing the start time, so the node waits (never fails)."""
    sim = _start(start_sim, tmp_path, paused=True)
    rec = UpgradeWatch(sim)
    sim.resume()
    node = sim.node("h100/0")
    sim.core.patch_node(node, {"metadata": {"labels": {
        "nvidia.com/gpu.deploy.operator-validator": "false"}}})
    validators = lambda: [p for p in sim.core.list_namespaced_pod(
        "gpu-operator", label_selector="app=nvidia-operator-validator").items
        if p.spec.node_name == node]
    sim.wait_for(lambda: not validators(), 600, "validator pod gone")
    state = lambda: sim.core.read_node(node).metadata.labels.get(STATE)
    sim.wait_for(lambda: state() == "validation-required", 3 * 3600, "validation-required")
    start = sim.emulated()
    sim.wait_for(lambda: sim.emulated() > start + 1200, 1300, "twice the 600 s limit")
    assert state() == "validation-required"
    assert VALIDATION_START not in (sim.core.read_node(node).metadata.annotations or {})
    assert "upgrade-failed" not in rec.history.get(node, [])


def test_daemonset_gpu_pods_make_pod_deletion_fail(start_sim: Any, tmp_path: Path) -> None:
    """gpu-operator ``cmd/gpu-operator/main.go`` gpuPodSpecFilter counts a GPU-requesting
    DaemonSet pod, the drain helper skips it: the counts differ and pod deletion fails
    (k8s-operator-libs ``pkg/upgrade/pod_manager.go``); drain is off, so upgrade-failed."""
    sim = _start(start_sim, tmp_path)
    node = sim.node("h100/0")
    sim.core.create_namespaced_pod("monitoring", {
        "metadata": {"name": "gpu-agent-x1", "labels": {"app": "gpu-agent"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                          "name": "gpu-agent", "uid": "u-agent",
                                          "controller": True}]},
        "spec": {"nodeName": node, "containers": [{
            "name": "agent", "image": "agent:1",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    state = lambda name: sim.core.read_node(name).metadata.labels.get(STATE)
    sim.wait_for(lambda: state(node) == "upgrade-failed", 3 * 3600, "upgrade-failed")
    events = sim.core.list_namespaced_event(
        "default", field_selector=f"involvedObject.name={node},reason=GPUDriverUpgrade").items
    # pod_manager.go only logs "Cannot delete all required pods": no Warning event says why
    assert [e.message for e in events if e.type == "Warning"] == []
    # the pod itself is never evicted (the drain helper ignores DaemonSet pods)
    assert sim.core.read_namespaced_pod("gpu-agent-x1", "monitoring").metadata.name


def test_each_node_passes_cordon_required_one_state_per_pass(start_sim: Any,
                                                            tmp_path: Path) -> None:
    """``ApplyState`` handles the nodes grouped by the state ``BuildState`` found, so one
    node moves one state per pass: cordon-required lasts until the next pass (the label
    change wakes it), long enough for anyone watching to see it."""
    sim = _start(start_sim, tmp_path, paused=True)
    rec = UpgradeWatch(sim)
    sim.resume()
    nodes = list(sim.operator.world.pool_members["h100"])
    entered: dict[tuple[str, str], float] = {}

    def stamp(event: Any) -> None:
        labels = event.obj["metadata"].get("labels") or {}
        key = (event.obj["metadata"]["name"], labels.get(STATE, ""))
        entered.setdefault(key, sim.cluster.clock.now())
    sim.cluster.store.watch("nodes", stamp)
    sim.wait_for(lambda: all("uncordon-required" in rec.history.get(n, []) and
                             rec.states.get(n) == "upgrade-done" for n in nodes),
                 4 * 3600, "both upgraded")
    for name in nodes:
        walked = rec.history[name]
        assert walked.index("upgrade-required") + 1 == walked.index("cordon-required")
        assert walked.index("cordon-required") + 1 == walked.index("wait-for-jobs-required")
        held = entered[(name, "wait-for-jobs-required")] - entered[(name, "cordon-required")]
        assert held >= 1.0, (name, held)  # a pass later, not in the same breath


ONE_NODE = """summary: one node
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 100%}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 1, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 10m, action: driver-version, version: 580.82.07}
"""


def test_no_slot_once_unavailable_nodes_reach_max_unavailable(start_sim: Any,
                                                              tmp_path: Path) -> None:
    """k8s-operator-libs ``pkg/upgrade/common_manager.go`` ``GetUpgradesAvailable``: slots
    become 0 whenever unavailable nodes >= maxUnavailable, even when maxUnavailable is not
    below the node count: a one-node cluster whose node is NotReady starts no upgrade."""
    sim = _start(start_sim, tmp_path, ONE_NODE)
    node = sim.node("h100/0")
    sim.core.patch_node_status(node, {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
         "message": "container runtime network not ready"}]}})
    ready = [c for c in sim.core.read_node(node).status.conditions if c.type == "Ready"]
    assert ready and ready[0].status == "False"
    state = lambda: sim.core.read_node(node).metadata.labels.get(STATE)
    sim.wait_for(lambda: state() == "upgrade-required", 3600, "upgrade-required")
    start = sim.emulated()
    # five of the controller's 2-minute passes
    sim.wait_for(lambda: sim.emulated() > start + 600, 700, "five passes")
    assert state() == "upgrade-required"
    assert not sim.core.read_node(node).spec.unschedulable
