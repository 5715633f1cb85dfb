"""Faults an operator rehearses: driver crash loops, a stuck validator, kubectl's view of them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.sim.conftest import Sim


def _pod_on(sim: Sim, app: str, node: str) -> Any:
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector=f"app={app}",
                                        field_selector=f"spec.nodeName={node}").items
    return pods[0] if pods else None


def _state(status: Any) -> str:
    state = status.state
    if state.waiting:
        return str(state.waiting.reason)
    return "running" if state.running else "terminated"


def test_stuck_validator_stays_in_cuda_validation(start_sim: Any) -> None:
    sim = start_sim("validator-stuck", speed=100)
    node = sim.node("h100/0")

    def stuck() -> bool:
        pod = _pod_on(sim, "nvidia-operator-validator", node)
        if pod is None or not pod.status.init_container_statuses:
            return False
        states = {s.name: _state(s) for s in pod.status.init_container_statuses}
        return states.get("cuda-validation") == "running"

    sim.wait_for(stuck, 300, "validator in cuda-validation")
    # read exactly ten minutes after cuda-validation started: upstream's container gives up
    # after 60 polls of 5 s and restarts after a 10 s back-off, so at +600 it runs again;
    # a poll that happens to land later (a loaded machine) could catch the back-off
    pod = _pod_on(sim, "nvidia-operator-validator", node)
    began = next(s.state.running.started_at for s in pod.status.init_container_statuses
                 if s.name == "cuda-validation").timestamp()
    sim.cluster.clock.pause_at(began + 600)
    sim.wait_for(lambda: sim.cluster.clock.now() >= began + 600, 700, "ten more minutes")
    pod = _pod_on(sim, "nvidia-operator-validator", node)
    sim.resume()
    states = {s.name: _state(s) for s in pod.status.init_container_statuses}
    assert states == {"driver-validation": "terminated", "toolkit-validation": "terminated",
                      "cuda-validation": "running", "plugin-validation": "PodInitializing"}
    assert pod.status.phase == "Pending"
    cuda = _pod_on(sim, "nvidia-cuda-validator", node)
    assert cuda is not None and cuda.status.phase == "Pending"
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["status"]["state"] == "notReady"
    assert "state-operator-validation" in policy["status"]["conditions"][1]["message"]


def test_kernel_update_crash_loops_the_driver(start_sim: Any, kubectl_bin: str, tmp_path: Path) -> None:
    sim = start_sim("driver-crashloop", speed=100)
    h100, a100 = sim.node("h100/0"), sim.node("a100/0")

    def crashing() -> bool:
        broken = _pod_on(sim, "nvidia-driver-daemonset", h100)
        busy = _pod_on(sim, "nvidia-driver-daemonset", a100)
        return bool(broken and busy and broken.status.container_statuses[0].restart_count >= 2
                    and busy.status.init_container_statuses[0].restart_count >= 2)

    sim.wait_for(crashing, 1800, "driver pods crash looping")
    node = sim.core.read_node(h100)
    assert node.status.node_info.kernel_version == "5.15.0-1075-gke"
    assert node.metadata.labels["feature.node.kubernetes.io/kernel-version.full"] == "5.15.0-1075-gke"
    # the kernel update rebooted the node and no device plugin registered since: the kubelet
    # zeroes the extended resource's capacity as well as its allocatable (issue 26, §4)
    assert node.status.allocatable["nvidia.com/gpu"] == "0" and node.status.capacity["nvidia.com/gpu"] == "0"
    broken = _pod_on(sim, "nvidia-driver-daemonset", h100)
    log = sim.core.read_namespaced_pod_log(broken.metadata.name, "gpu-operator", container="nvidia-driver-ctr")
    assert "Could not install Linux kernel headers for kernel 5.15.0-1075-gke" in log
    busy = _pod_on(sim, "nvidia-driver-daemonset", a100)
    log = sim.core.read_namespaced_pod_log(busy.metadata.name, "gpu-operator", container="k8s-driver-manager")
    assert "Could not unload NVIDIA driver kernel modules, driver is in use" in log
    toolkit = _pod_on(sim, "nvidia-container-toolkit-daemonset", h100)
    assert _state(toolkit.status.init_container_statuses[0]) == "running"  # driver-validation waits
    kubeconfig = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")

    def kubectl_lines() -> dict[str, str]:
        out = subprocess.run([kubectl_bin, "--kubeconfig", str(kubeconfig), "get", "pods", "-n",
                              "gpu-operator", "-o", "wide"], capture_output=True, check=False, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return {line.split()[0]: line for line in out.stdout.splitlines()[1:]}

    # between back-offs the container runs again for a few seconds: catch a back-off
    lines = sim.wait_for(lambda: (found := kubectl_lines()) and
                         "Init:CrashLoopBackOff" in found[busy.metadata.name] and
                         "CrashLoopBackOff" in found[broken.metadata.name] and found, 3600,
                         "kubectl shows both crash loops")
    assert "Init:0/1" in lines[toolkit.metadata.name]
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert "state-driver" in policy["status"]["conditions"][1]["message"]


def test_someone_else_cordons_and_a_second_policy_is_ignored(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("summary: two policies\nextraClusterPolicies: [cluster-policy-2]\n"
                    "nodePools: [{name: l4, prefix: gke-prod-l4-pool-5a0b, count: 2, gpu: L4, gpusPerNode: 2}]\n"
                    "timeline: [{at: 5s, action: cordon, node: l4/1}]\n")
    sim = start_sim(str(path), speed=50)
    get = lambda name: sim.custom.get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", name)
    sim.wait_for(lambda: get("cluster-policy-2").get("status", {}).get("state") == "ignored", 120, "ignored")
    assert get("cluster-policy")["status"]["state"] == "ready"
    sim.wait_for(lambda: sim.core.read_node(sim.node("l4/1")).spec.unschedulable, 120, "cordoned")
    node = sim.core.read_node(sim.node("l4/1"))
    assert "nvidia.com/gpu.deploy.mig-manager" not in node.metadata.labels
    assert node.metadata.labels["nvidia.com/mig.capable"] == "false"


def test_empty_cluster_has_namespace_policy_and_no_nodes(start_sim: Any) -> None:
    sim = start_sim("empty", speed=10)
    assert sim.core.list_node().items == []
    assert sim.core.read_namespace("gpu-operator").status.phase == "Active"
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=gpu-operator").items
    assert len(pods) == 1 and pods[0].status.phase == "Pending"
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    sim.wait_for(lambda: sim.custom.get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy").get("status"), 60, "status")
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["status"]["state"] == "ready"
    assert policy["status"]["conditions"][0]["reason"] == "NFDLabelsMissing"


NO_PLUGIN = """summary: device plugin disabled on a joining node
nodePools:
  - {name: l4, prefix: gke-prod-l4-pool-5a0b, count: 1, gpu: L4, gpusPerNode: 2, converged: false,
     labels: {nvidia.com/gpu.deploy.device-plugin: "false"}}
"""


def test_plugin_validation_gives_up_without_a_device_plugin(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "noplugin.yaml"
    path.write_text(NO_PLUGIN)
    sim = start_sim(str(path), speed=200)
    node = sim.node("l4/0")

    def failed() -> bool:
        pod = _pod_on(sim, "nvidia-operator-validator", node)
        if pod is None or not pod.status.init_container_statuses:
            return False
        plugin = pod.status.init_container_statuses[3]
        return bool(plugin.restart_count >= 1)

    sim.wait_for(failed, 1800, "plugin-validation fails")
    pod = _pod_on(sim, "nvidia-operator-validator", node)
    log = sim.core.read_namespaced_pod_log(pod.metadata.name, "gpu-operator", container="plugin-validation")
    assert "GPU resources are not yet discovered by the node, retry: 30" in log
    assert _pod_on(sim, "nvidia-device-plugin-daemonset", node) is None
    assert "nvidia.com/gpu" not in (sim.core.read_node(node).status.capacity or {})
