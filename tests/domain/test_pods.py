"""Pod status reading: the kubectl STATUS column, init progress, GPU requests."""

from __future__ import annotations

from gputui.domain.pods import gpu_requests, read_pod
from tests.domain import factory as f


def test_driver_init_crashloop_reads_like_kubectl() -> None:
    pod = read_pod(f.load("pod-driver-init-crashloop.json"))
    assert pod.status == "Init:CrashLoopBackOff"
    assert pod.restarts == 14
    failing = pod.failing_container()
    assert failing is not None and failing.name == "k8s-driver-manager"
    assert "driver is in use" in failing.message
    assert not pod.ready and pod.node == f.NODE


def test_validator_in_cuda_validation_is_init_2_of_4() -> None:
    pod = read_pod(f.load("pod-validator-cuda-validation.json"))
    assert pod.status == "Init:2/4"
    current = pod.current_init()
    assert current is not None and current.name == "cuda-validation"
    assert current.state == "running"


def test_ready_pod() -> None:
    pod = read_pod(f.operand_pod("device-plugin"))
    assert pod.status == "Running" and pod.ready and pod.current_init() is None


def test_main_container_crashloop() -> None:
    pod = read_pod(f.operand_pod("dcgm-exporter", crash_in="nvidia-dcgm-exporter", restarts=3))
    assert pod.status == "CrashLoopBackOff"
    assert pod.failing_container() is not None


def test_terminating_pod() -> None:
    assert read_pod(f.operand_pod("device-plugin", deleting=True)).status == "Terminating"


def test_gpu_requests_count_gpus_mig_and_shared_but_not_cpu() -> None:
    pod = f.workload("w", gpus=2)
    pod["spec"]["containers"].append({"name": "side", "resources": {
        "limits": {"nvidia.com/mig-1g.10gb": "1", "cpu": "2"}}})
    pod["spec"]["containers"].append({"name": "shared", "resources": {
        "requests": {"nvidia.com/gpu.shared": "1"}}})
    assert gpu_requests(pod) == {"nvidia.com/gpu": 2, "nvidia.com/mig-1g.10gb": 1,
                                 "nvidia.com/gpu.shared": 1}


def test_unschedulable_pod_message() -> None:
    pod = read_pod(f.load("pod-cuda-validator-pending.json"))
    assert "Insufficient nvidia.com/gpu" in pod.unschedulable


def test_a_read_pod_writes_back_to_a_dict_that_reads_the_same() -> None:
    """Recordings store the cache's pods (already read) as dicts: reading one back must give
    the same pod, for every pod of every recorded scenario, or a recorded fixture would
    show a different cluster than the one recorded."""
    import json

    from gputui.domain.pods import pod_to_dict
    from tests.fixtures import SCENARIOS

    read = [read_pod(raw) for path in sorted(SCENARIOS.glob("*.json"))
            for _, _, raw in json.loads(path.read_text())["objects"]["pods"]]
    assert len(read) > 300
    kinds = {(p.status, bool(p.gpu_requests), bool(p.init_containers)) for p in read}
    assert len(kinds) > 5  # crash loops, init progress, GPU workloads, plain running pods
    for pod in read:
        assert read_pod(pod_to_dict(pod)) == pod, pod.name


def test_a_pending_pod_is_placed_by_its_node_selector_or_daemonset_affinity() -> None:
    validator = {"metadata": {"name": "v", "namespace": "ns"},
                 "spec": {"nodeSelector": {"kubernetes.io/hostname": "n1"}}}
    plugin = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}}}
    scheduled = {"metadata": {"name": "s", "namespace": "ns"},
                 "spec": {"nodeName": "n3", "nodeSelector": {"kubernetes.io/hostname": "n9"}}}
    assert [read_pod(p).placement for p in (validator, plugin, scheduled)] == ["n1", "n2", "n3"]
    assert read_pod(scheduled).pinned_node == ""  # nodeName wins once scheduled
    assert read_pod({"metadata": {"name": "x"}}).placement is None
