"""Driver upgrade pod deletion and drain: force, emptyDir, PDBs, selectors and timeouts (§4.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from tests.sim.conftest import Sim

STATE = "nvidia.com/gpu-driver-upgrade-state"


def _moves(sim: Sim, node: str) -> list[str]:
    """The upgrade states the node went through, from its ``GPUDriverUpgrade`` events."""
    prefix = "Successfully updated node state label to "
    return [e.message[len(prefix):] for e in sim.core.list_namespaced_event("default").items
            if e.involved_object.name == node and e.message.startswith(prefix)]


def _warnings(sim: Sim, node: str) -> list[str]:
    return [e.message for e in sim.core.list_namespaced_event("default").items
            if e.reason == "GPUDriverUpgrade" and e.type == "Warning"
            and e.involved_object.name == node]


def _state(sim: Sim, node: str) -> str:
    return str(sim.core.read_node(node).metadata.labels.get(STATE, ""))


def test_pdb_blocks_pod_deletion_then_drain_until_upgrade_failed(start_sim: Any) -> None:
    sim = start_sim("upgrade-drain-blocked", speed=600)
    trainer = sim.wait_for(lambda: [p for p in sim.core.list_namespaced_pod("ml-training").items
                                    if p.status.phase == "Running"], 120, "trainer running")[0]
    node = trainer.spec.node_name
    sim.wait_for(lambda: _state(sim, node) == "upgrade-failed", 3600, "upgrade-failed")
    assert _moves(sim, node)[-3:] == ["pod-deletion-required", "drain-required", "upgrade-failed"]
    warnings = _warnings(sim, node)
    ref = f'pods/"{trainer.metadata.name}" -n "ml-training"'
    assert ("Failed to delete workload pods on the node for the driver upgrade, error when "
            f"evicting {ref}: global timeout reached: 2m0s") in warnings
    assert f"Failed to drain the node, error when evicting {ref}: global timeout reached: 5m0s" \
        in warnings
    # the trainer was never evicted, and the API server's eviction refuses it the same way
    assert sim.core.read_namespaced_pod(trainer.metadata.name, "ml-training").status.phase == "Running"
    try:
        sim.core.create_namespaced_pod_eviction(trainer.metadata.name, "ml-training", {
            "apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": trainer.metadata.name, "namespace": "ml-training"}})
        raise AssertionError("eviction allowed")
    except ApiException as error:
        assert error.status == 429
    others = [n for n in sim.operator.world.pool_members["h100"] if n != node]
    sim.wait_for(lambda: all(_state(sim, n) == "upgrade-done" for n in others), 3600, "others done")


POLICY = """summary: three nodes, pods the pod deletion cannot or may delete
clusterPolicy:
  spec:
    driver:
      upgradePolicy:
        autoUpgrade: true
        maxParallelUpgrades: 0
        maxUnavailable: 100%
        podDeletion: {force: false, deleteEmptyDir: false, timeoutSeconds: 300}
        drain: {enable: DRAIN, force: true, podSelector: "tier=batch", timeoutSeconds: 300}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 3, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 20m, action: driver-version, version: 580.82.07}
"""


def _pod(sim: Sim, name: str, node: str, *, gpus: bool = True, owned: bool = True,
         empty_dir: bool = False, labels: dict[str, str] | None = None) -> None:
    """A pod bound to ``node`` as a client would create it."""
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                    "uid": "3f1c0e52-0000-4000-8000-000000000001",
                                    "controller": True}]
    spec: dict[str, Any] = {"nodeName": node, "containers": [container]}
    if empty_dir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    sim.core.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod",
                                               "metadata": meta, "spec": spec})


def _exists(sim: Sim, name: str) -> bool:
    return any(p.metadata.name == name for p in sim.core.list_namespaced_pod("default").items)


def test_unmanaged_and_empty_dir_pods_fail_until_force_and_delete_empty_dir(
        start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.replace("DRAIN", "false"))
    sim = start_sim(str(path), speed=600)
    bare, scratch, plain = (sim.node(f"h100/{i}") for i in range(3))
    _pod(sim, "bare", bare, owned=False)
    _pod(sim, "scratch", scratch, empty_dir=True)
    _pod(sim, "plain", plain)
    failed = lambda: _moves(sim, bare)[-1:] == _moves(sim, scratch)[-1:] == ["upgrade-failed"]
    sim.wait_for(failed, 3600, "both nodes upgrade-failed")
    assert _exists(sim, "bare") and _exists(sim, "scratch") and not _exists(sim, "plain")
    # pod_manager.go SchedulePodEviction only logs GetPodsForDeletion's errors; with drain
    # off, updateNodeToDrainOrFailed records no event either
    assert _warnings(sim, bare) == _warnings(sim, scratch) == []
    sim.wait_for(lambda: _moves(sim, plain)[-1:] == ["upgrade-done"] and "pod-deletion-required"
                 in _moves(sim, plain), 3600, "plain node upgraded")
    sim.custom.patch_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy", {
        "spec": {"driver": {"upgradePolicy": {"podDeletion": {"force": True, "deleteEmptyDir": True}}}}})
    for node in (bare, scratch):
        sim.core.patch_node(node, {"metadata": {"labels": {STATE: "upgrade-required"}}})
    sim.wait_for(lambda: not _exists(sim, "bare") and not _exists(sim, "scratch"), 1800, "deleted")
    sim.wait_for(lambda: _state(sim, bare) == _state(sim, scratch) == "upgrade-done", 3600, "done")


def test_drain_honours_its_selector_and_the_skip_label(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "drain.yaml"
    path.write_text(POLICY.replace("DRAIN", "true"))
    sim = start_sim(str(path), speed=600)
    node = sim.node("h100/0")
    _pod(sim, "bare", node, owned=False, labels={"tier": "batch"})  # only drain.force takes it
    _pod(sim, "batch", node, gpus=False, labels={"tier": "batch"})
    _pod(sim, "batch-kept", node, gpus=False, labels={
        "tier": "batch", "nvidia.com/gpu-driver-upgrade-drain.skip": "true"})
    _pod(sim, "web", node, gpus=False, labels={"tier": "web"})
    sim.wait_for(lambda: _moves(sim, node)[-1:] == ["upgrade-done"]
                 and "drain-required" in _moves(sim, node), 3600, "node drained and upgraded")
    assert _moves(sim, node)[-9:] == [
        "upgrade-required", "cordon-required", "wait-for-jobs-required", "pod-deletion-required",
        "drain-required", "pod-restart-required", "validation-required", "uncordon-required",
        "upgrade-done"]
    assert not _exists(sim, "bare") and not _exists(sim, "batch")
    assert _exists(sim, "batch-kept") and _exists(sim, "web")
    events = [e.message for e in sim.core.list_namespaced_event("default").items
              if e.reason == "GPUDriverUpgrade" and e.involved_object.name == node]
    assert "Scheduling drain of the node" in events and "Successfully drained the node" in events
