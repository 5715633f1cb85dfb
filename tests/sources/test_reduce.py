"""Reduction on arrival: what is dropped, what is kept, and label-change times."""

from __future__ import annotations

from gputui.sources.decode import (
    gpu_request,
    label_times,
    reduce_gpu_pod,
    reduce_node,
    reduce_operator_pod,
)
from gputui.sources.reduce import parse_time
from tests.sources.helpers import MANAGED, node, pod


def test_label_times_take_the_latest_owner() -> None:
    raw = node("n1")
    raw["metadata"]["managedFields"] = MANAGED
    times = label_times(raw)
    assert times == {"nvidia.com/mig.config.state": parse_time("2026-11-29T11:00:00Z"),
                     "nvidia.com/gpu.present": parse_time("2026-11-29T11:00:00Z")}


def test_node_reduction_drops_managed_fields_and_images() -> None:
    raw = node("n1")
    raw["metadata"]["managedFields"] = MANAGED
    reduced, times = reduce_node(raw)
    assert "managedFields" not in reduced["metadata"]
    assert "images" not in reduced["status"]
    assert reduced["status"]["nodeInfo"] == {"kernelVersion": "6.8.0"}
    assert set(times) == {"nvidia.com/mig.config.state", "nvidia.com/gpu.present"}
    assert "managedFields" in raw["metadata"] and "images" in raw["status"]  # input untouched


def test_gpu_pods_kept_small_and_others_dropped() -> None:
    assert reduce_gpu_pod(pod("ml", "cpu-only", "n1")) is None
    raw = pod("ml", "train", "n1", gpus=2)
    raw["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "2",
                                                             "nvidia.com/mig-1g.10gb": "1"}
    raw["status"]["containerStatuses"] = [{"name": "main", "ready": True, "restartCount": 0,
                                           "state": {"running": {}}}]
    reduced = reduce_gpu_pod(raw)
    assert reduced is not None
    kept = reduced[0]
    assert (kept.node, kept.phase, kept.status) == ("n1", "Running", "Running")
    assert kept.gpu_requests == {"nvidia.com/mig-1g.10gb": 1, "nvidia.com/gpu": 2}
    # a workload's container states are not kept: its phase is what gputui shows of it
    assert [(c.name, c.state) for c in kept.containers] == [("main", "unknown")]


def test_gpu_request_sees_mig_and_init_containers() -> None:
    raw = pod("ml", "p", "n1")
    raw["spec"]["initContainers"] = [{"name": "i", "resources": {
        "limits": {"nvidia.com/mig-3g.40gb": "1"}}}]
    assert gpu_request(raw)


def test_operator_pod_keeps_what_the_pipeline_reads() -> None:
    raw = pod("gpu-operator", "nvidia-driver-daemonset-x", "n1",
              labels={"app": "nvidia-driver-daemonset"})
    raw["spec"]["containers"][0]["env"] = [{"name": "DRIVER_CONFIG_DIGEST", "value": "abc"}]
    raw["status"]["containerStatuses"] = [{"name": "main", "ready": False, "restartCount": 12,
                                           "imageID": "sha256:x",
                                           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                           "name": "nvidia-driver-daemonset", "uid": "u"}]
    raw["status"]["conditions"] = [{"type": "Ready", "status": "True"},
                                   {"type": "PodScheduled", "status": "False",
                                    "reason": "Unschedulable", "lastProbeTime": None}]
    reduced, _ = reduce_operator_pod(raw)
    assert (reduced.node, reduced.daemonset, reduced.unschedulable) == (
        "n1", "nvidia-driver-daemonset", "Unschedulable")
    [main] = reduced.containers
    assert (main.name, main.state, main.reason, main.restarts) == (
        "main", "waiting", "CrashLoopBackOff", 12)
    assert (reduced.status, reduced.restarts) == ("CrashLoopBackOff", 12)
    assert reduced.labels == {"app": "nvidia-driver-daemonset"}


def test_equal_parts_are_shared_between_pods() -> None:
    """Pods of one DaemonSet revision share one labels dict, and their repeated strings."""
    labels = {"app": "nvidia-dcgm-exporter", "controller-revision-hash": "7f9"}
    first, _ = reduce_operator_pod(pod("gpu-operator", "a", "n1", labels=dict(labels)))
    second, _ = reduce_operator_pod(pod("gpu-operator", "b", "n2", labels=dict(labels)))
    assert first.labels is second.labels
    assert first.containers[0].name is second.containers[0].name
    assert first.phase is second.phase and first.namespace is second.namespace
    assert first.node == "n1" and second.node == "n2"
