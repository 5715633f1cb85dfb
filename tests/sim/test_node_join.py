"""A node joins: NFD, operator labels, the operand chain in order, capacity last."""

from __future__ import annotations

from typing import Any

from gputui.sim.store import WatchEvent
from tests.sim.conftest import Sim


def _done(pod: dict[str, Any], container: str) -> bool:
    for status in pod["status"].get("initContainerStatuses", []):
        if status["name"] == container:
            return status["state"].get("terminated", {}).get("reason") == "Completed"
    return False


JOIN = """summary: one node joins late enough for the test to watch it
nodePools:
  - {name: h100, prefix: gke-prod-h100-pool-7f3a, count: 1, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 600s, action: join, pool: h100, count: 1}
"""


def _record(sim: Sim) -> dict[str, list[str]]:
    """First time each milestone happens on each node, in store (resourceVersion) order."""
    seen: dict[str, list[str]] = {}

    def note(node: str, what: str) -> None:
        if what not in seen.setdefault(node, []):
            seen[node].append(what)

    def on_node(event: WatchEvent) -> None:
        node = event.obj["metadata"]["name"]
        labels = event.obj["metadata"].get("labels") or {}
        if labels.get("feature.node.kubernetes.io/pci-10de.present") == "true":
            note(node, "nfd")
        if labels.get("nvidia.com/gpu.deploy.driver") == "true":
            note(node, "deploy-labels")
        if labels.get("nvidia.com/gpu.product"):
            note(node, "gfd")
        if int(event.obj["status"].get("allocatable", {}).get("nvidia.com/gpu", "0")) > 0:
            note(node, "allocatable")

    def on_pod(event: WatchEvent) -> None:
        pod = event.obj
        node = pod["spec"].get("nodeName") or ""
        app = pod["metadata"].get("labels", {}).get("app")
        if app == "nvidia-driver-daemonset" and all(
                c.get("ready") for c in pod["status"].get("containerStatuses", [{}])):
            note(node, "driver-ready")
        if app == "nvidia-operator-validator":
            for step in ("driver-validation", "toolkit-validation", "cuda-validation",
                         "plugin-validation"):
                if _done(pod, step):
                    note(node, step)
        if app == "nvidia-cuda-validator" and pod["status"].get("phase") == "Succeeded":
            note(node, "cuda-validator-succeeded")

    store = sim.cluster.store
    store.watch("nodes", on_node)
    store.watch("pods", on_pod)
    return seen


def test_joining_node_becomes_allocatable_only_after_the_chain(start_sim: Any, tmp_path: Any) -> None:
    scenario = tmp_path / "join.yaml"
    scenario.write_text(JOIN)
    sim = start_sim(str(scenario), speed=150)
    seen = _record(sim)
    sim.wait_for(lambda: len(sim.operator.world.pool_members["h100"]) == 2, 900, "node joins")
    joined = sim.node("h100/1")

    def allocatable() -> bool:
        node = sim.core.read_node(joined)
        return int((node.status.allocatable or {}).get("nvidia.com/gpu", "0")) == 8

    sim.wait_for(allocatable, 600, "joined node allocatable")
    sim.wait_for(lambda: "plugin-validation" in seen.get(joined, []), 120, f"plugin validation {seen.get(joined)}")
    order = ["nfd", "deploy-labels", "driver-ready", "driver-validation", "toolkit-validation",
             "allocatable", "plugin-validation"]
    mine = seen[joined]
    assert [m for m in mine if m in order] == order
    assert mine.index("cuda-validator-succeeded") < mine.index("plugin-validation")
    assert mine.index("gfd") > mine.index("toolkit-validation")


def test_join_to_allocatable_takes_minutes_and_gpu_count_comes_last(start_sim: Any,
                                                                    tmp_path: Any) -> None:
    """A joining node builds its driver on the node (NVIDIA: "drivers are built on the
    cluster nodes ... leading to ... long provisioning times", GPU Operator docs,
    "Precompiled Drivers"): join -> allocatable takes minutes, not the seconds a converged
    node's rebuild takes. Until GFD runs (after ``toolkit-validation``) the node has no
    ``nvidia.com/gpu.count``. Today's emulator makes it allocatable about 80 s after joining."""
    scenario = tmp_path / "join.yaml"
    scenario.write_text(JOIN)
    sim = start_sim(str(scenario), speed=150)
    seen: dict[str, dict[str, float]] = {}

    def on_node(event: WatchEvent) -> None:
        times = seen.setdefault(event.obj["metadata"]["name"], {})
        labels = event.obj["metadata"].get("labels") or {}
        if "feature.node.kubernetes.io/pci-10de.present" in labels:
            times.setdefault("nfd", sim.cluster.clock.now())
        if "nvidia.com/gpu.count" in labels:
            times.setdefault("count", sim.cluster.clock.now())
        if int(event.obj["status"].get("allocatable", {}).get("nvidia.com/gpu", "0")) > 0:
            times.setdefault("allocatable", sim.cluster.clock.now())

    sim.cluster.store.watch("nodes", on_node)
    sim.wait_for(lambda: len(sim.operator.world.pool_members["h100"]) == 2, 900, "node joins")
    joined = sim.node("h100/1")
    times = sim.wait_for(lambda: {"allocatable", "count"} <= seen.get(joined, {}).keys()
                         and seen[joined], 900, "allocatable")
    created = sim.operator.world.nodes[joined].joined_at
    assert 4 * 60 <= times["allocatable"] - created <= 10 * 60, times["allocatable"] - created
    assert times["nfd"] - created < 60
    assert times["count"] >= times["nfd"] + 4 * 60  # GFD labels only after the driver build


def test_label_writers_are_recorded_in_managed_fields(start_sim: Any) -> None:
    sim = start_sim("node-join", speed=150)
    name = sim.node("h100/0")
    node = sim.core.read_node(name)
    owners = {}
    for entry in node.metadata.managed_fields:
        for key in entry.fields_v1.get("f:metadata", {}).get("f:labels", {}):
            owners[key[2:]] = entry.manager
    assert owners["nvidia.com/gpu.present"] == "gpu-operator"
    assert owners["nvidia.com/mig.config.state"] in ("nvidia-mig-manager", "gpu-operator")
    labels = node.metadata.labels
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8" and labels["nvidia.com/mig.capable"] == "true"
    assert labels["nvidia.com/gpu.deploy.mig-manager"] == "true"
    assert labels["nvidia.com/mig.config"] == "all-disabled"
    assert node.metadata.annotations["nvidia.com/gpu-driver-upgrade-enabled"] == "true"
    assert node.status.node_info.kernel_version == labels["feature.node.kubernetes.io/kernel-version.full"]


def test_operands_look_like_the_real_daemonsets(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=50)
    sets = {d.metadata.name: d for d in sim.apps.list_namespaced_daemon_set("gpu-operator").items}
    driver = sets["nvidia-driver-daemonset"]
    assert driver.spec.update_strategy.type == "OnDelete"
    assert driver.spec.template.spec.node_selector == {"nvidia.com/gpu.deploy.driver": "true"}
    assert sets["nvidia-operator-validator"].spec.update_strategy.type == "RollingUpdate"
    assert driver.status.desired_number_scheduled == 7 == driver.status.number_ready
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-driver-daemonset").items
    revisions = sim.apps.list_namespaced_controller_revision("gpu-operator").items
    hashes = {r.metadata.labels["controller-revision-hash"] for r in revisions
              if r.metadata.name.startswith("nvidia-driver-daemonset-")}
    for pod in pods:
        assert pod.metadata.owner_references[0].kind == "DaemonSet"
        assert pod.metadata.labels["controller-revision-hash"] in hashes
        assert pod.spec.priority_class_name == "system-node-critical"
        assert [c.name for c in pod.spec.init_containers] == ["k8s-driver-manager"]
        assert pod.status.phase == "Running" and pod.status.pod_ip and pod.status.host_ip
    operator = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=gpu-operator").items
    assert len(operator) == 1 and operator[0].status.phase == "Running"
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["status"]["state"] == "ready" and policy["status"]["namespace"] == "gpu-operator"
    assert policy["spec"]["driver"]["version"] == "570.172.08"
