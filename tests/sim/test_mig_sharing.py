"""MIG manager state labels, pauses and capacity; device-plugin time-slicing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sim.conftest import Sim

STATE = "nvidia.com/mig.config.state"
MIG = """summary: MIG changes late enough to watch (mixed strategy)
clusterPolicy: {spec: {mig: {strategy: mixed}}}
nodePools:
  - {name: a100, prefix: gke-prod-a100-pool-2b9c, count: 3, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
timeline:
  - {at: 10m, action: mig-config, node: a100/0, config: all-3g.20gb}
  - {at: 10m, action: mig-fail, node: a100/1}
  - {at: 10m, action: mig-config, node: a100/1, config: all-1g.10gb}
  - {at: 10m, action: mig-config, node: a100/2, config: all-1g.10gb}
"""


def _watch_labels(sim: Sim) -> dict[str, list[tuple[str, str]]]:
    """Per node: every (MIG state, device-plugin deploy label) pair seen, in order."""
    seen: dict[str, list[tuple[str, str]]] = {}

    def on_node(event: Any) -> None:
        labels = event.obj["metadata"].get("labels") or {}
        pair = (labels.get(STATE, ""), labels.get("nvidia.com/gpu.deploy.device-plugin", ""))
        history = seen.setdefault(event.obj["metadata"]["name"], [])
        if not history or history[-1] != pair:
            history.append(pair)

    sim.cluster.store.watch("nodes", on_node)
    return seen


def test_mig_changes_move_state_labels_and_capacity(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "mig.yaml"
    path.write_text(MIG)
    sim = start_sim(str(path), speed=200)
    seen = _watch_labels(sim)
    bad, failing, good = sim.node("a100/0"), sim.node("a100/1"), sim.node("a100/2")
    labels = lambda name: sim.core.read_node(name).metadata.labels
    sim.wait_for(lambda: labels(good).get("nvidia.com/mig.config") == "all-1g.10gb"
                 and labels(good).get(STATE) == "success", 1800, "MIG applied")
    sim.wait_for(lambda: labels(failing).get(STATE) == "failed", 600, "MIG failure")
    assert ("pending", "paused-for-mig-change") in seen[good]
    assert seen[good][-1] == ("success", "true")
    assert ("pending", "paused-for-mig-change") in seen[failing]
    assert seen[failing][-1] == ("failed", "true")
    assert labels(bad)[STATE] == "failed" and ("pending", "paused-for-mig-change") not in seen.get(bad, [])

    def mig_capacity() -> bool:  # the device plugin's capacity and GFD's label: two writers
        node = sim.core.read_node(good)
        return (node.status.allocatable.get("nvidia.com/mig-1g.10gb") == "56"
                and "nvidia.com/mig-1g.10gb.count" in node.metadata.labels)

    sim.wait_for(mig_capacity, 300, "mixed MIG capacity")
    node = sim.core.read_node(good)
    assert "nvidia.com/gpu" not in node.status.capacity
    assert node.metadata.labels["nvidia.com/mig-1g.10gb.count"] == "56"
    assert sim.core.read_node(failing).status.capacity["nvidia.com/gpu"] == "8"
    config = sim.core.read_namespaced_config_map(f"{good}-mig-config", "gpu-operator")
    assert "all-1g.10gb:" in config.data["config.yaml"] and "all-balanced:" in config.data["config.yaml"]
    assert config.metadata.labels["nvidia.com/node-name"] == good
    assert sim.core.read_namespaced_config_map("default-mig-parted-config", "gpu-operator").data


def test_single_strategy_advertises_mig_devices_as_gpus(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=200, faults="mig:a100/0:all-1g.10gb@1m")
    node = sim.node("a100/0")
    sim.wait_for(lambda: sim.core.read_node(node).status.allocatable.get("nvidia.com/gpu") == "56",
                 1800, "56 MIG devices as nvidia.com/gpu")
    sim.wait_for(lambda: sim.core.read_node(node).metadata.labels.get("nvidia.com/gpu.product")
                 == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", 300, "GFD relabels the product")
    labels = sim.core.read_node(node).metadata.labels
    assert labels["nvidia.com/gpu.count"] == "56" and labels["nvidia.com/mig.strategy"] == "single"


def test_time_slicing_multiplies_capacity(start_sim: Any) -> None:
    sim = start_sim("time-slicing", speed=100)
    t4 = sim.core.read_node(sim.node("t4/0"))
    assert t4.status.capacity["nvidia.com/gpu"] == "16"
    assert t4.metadata.labels["nvidia.com/gpu.product"] == "Tesla-T4-SHARED"
    assert t4.metadata.labels["nvidia.com/gpu.replicas"] == "4"
    assert t4.metadata.labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert t4.metadata.labels["nvidia.com/device-plugin.config"] == "tesla-t4"
    l4 = sim.node("l4/0")
    assert sim.core.read_node(l4).metadata.labels["nvidia.com/gpu.sharing-strategy"] == "none"
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["spec"]["devicePlugin"]["config"]["name"] == "time-slicing-config"
    sim.core.patch_node(l4, {"metadata": {"labels": {"nvidia.com/device-plugin.config": "l4-renamed"}}})
    sim.wait_for(lambda: sim.core.read_node(l4).status.capacity.get("nvidia.com/gpu.shared") == "4",
                 300, "renamed shared resource")
    node = sim.core.read_node(l4)
    assert "nvidia.com/gpu" not in node.status.capacity
    assert node.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-L4"
    assert node.metadata.labels["nvidia.com/gpu.replicas"] == "2"
