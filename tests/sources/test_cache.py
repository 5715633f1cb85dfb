"""The object cache: change tracking by the domain's node rule, merged views kept in step,
and content that changes only when the build thread applies what the feeds submitted."""

from __future__ import annotations

from typing import Any

from gputui.sources.cache import ObjectCache
from tests.sources.helpers import node, pod

NS = "gpu-operator"


def _meta(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    obj["metadata"]["resourceVersion"] = str(rv)
    obj["metadata"].setdefault("namespace", "")
    return obj


def _node(name: str, rv: int = 1) -> dict[str, Any]:
    return _meta(node(name), rv)


def _pod(namespace: str, name: str, node_name: str | None, rv: int = 1,
         **spec: Any) -> dict[str, Any]:
    obj = _meta(pod(namespace, name, node_name), rv)
    obj["spec"].update(spec)
    return obj


def _synced(*nodes: str) -> ObjectCache:
    cache = ObjectCache()
    cache.replace("nodes", [(_node(n), {}) for n in nodes])
    cache.replace("pods", [])
    cache.replace("gpu-pods", [])
    cache.apply_pending()
    cache.take_changes()
    return cache


def test_selector_bound_pod_marks_its_node_changed() -> None:
    """A CUDA validator pinned by hostname selector (no nodeName yet) names its node."""
    cache = _synced("gpu-0", "gpu-1")
    validator = _pod(NS, "nvidia-cuda-validator-x", None,
                     nodeSelector={"kubernetes.io/hostname": "gpu-1"})
    cache.apply("pods", "ADDED", validator, {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset({"gpu-1"})


def test_affinity_bound_pod_marks_its_node_changed() -> None:
    cache = _synced("gpu-0")
    pending = _pod(NS, "nvidia-driver-daemonset-x", None, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchFields": [{"key": "metadata.name", "operator": "In",
                             "values": ["gpu-0"]}]}]}}})
    cache.apply("pods", "ADDED", pending, {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset({"gpu-0"})
    cache.apply("pods", "DELETED", pending, {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset({"gpu-0"})  # the old object names it too


def test_cluster_wide_objects_ask_for_no_full_build() -> None:
    """The builder compares DaemonSets and the ClusterPolicy itself: an empty change set."""
    cache = _synced("gpu-0")
    cache.apply("daemonsets", "ADDED", _meta({"metadata": {"name": "ds", "namespace": NS}}, 2),
                {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset()


def test_content_changes_only_when_applied() -> None:
    """The builder's mappings are the cache's own, so feeds must not write them mid-build."""
    cache = _synced("gpu-0")
    inputs = cache.build_inputs()
    cache.apply("nodes", "ADDED", _node("gpu-1", 2), {})
    cache.apply("pods", "ADDED", _pod(NS, "p", "gpu-0", 3), {})
    assert sorted(inputs.nodes) == ["gpu-0"] and not inputs.pods
    assert cache.apply_pending()
    assert sorted(inputs.nodes) == ["gpu-0", "gpu-1"] and (NS, "p") in inputs.pods
    assert not cache.apply_pending()  # nothing new


def test_unknown_deletion_is_dropped_at_once() -> None:
    """A non-GPU pod leaving the GPU-pod feed changes nothing: no wake-up, no build."""
    cache = _synced("gpu-0")
    assert not cache.apply("gpu-pods", "DELETED", _pod("ml", "web", "gpu-0"), {})
    assert cache.apply("gpu-pods", "ADDED", _pod("ml", "train", "gpu-0"), {})
    assert cache.apply("gpu-pods", "DELETED", _pod("ml", "train", "gpu-0"), {})


def test_gpu_pods_follow_their_node_in_and_out() -> None:
    """GPU pods count only on GPU nodes, whichever of the two arrives first."""
    cache = _synced("gpu-0")
    inputs = cache.build_inputs()
    train = _pod("ml", "train", "gpu-9", 5)
    cache.apply("gpu-pods", "ADDED", train, {})
    cache.apply_pending()
    assert ("ml", "train") not in inputs.pods
    cache.apply("nodes", "ADDED", _node("gpu-9", 6), {})
    cache.apply_pending()
    assert inputs.pods[("ml", "train")] is train
    cache.apply("nodes", "DELETED", _node("gpu-9", 7), {})
    cache.apply_pending()
    assert ("ml", "train") not in inputs.pods and "gpu-9" not in inputs.nodes


def test_operand_pod_wins_and_objects_are_replaced_not_copied() -> None:
    cache = _synced("gpu-0")
    inputs = cache.build_inputs()
    gpu_view, operand_view = _pod(NS, "p", "gpu-0", 1), _pod(NS, "p", "gpu-0", 1)
    cache.apply("gpu-pods", "ADDED", gpu_view, {})
    cache.apply("pods", "ADDED", operand_view, {})
    cache.apply_pending()
    assert inputs.pods[(NS, "p")] is operand_view
    cache.apply("pods", "DELETED", operand_view, {})
    cache.apply_pending()
    assert inputs.pods[(NS, "p")] is gpu_view


def test_relist_keeps_unchanged_objects_and_reports_only_changes() -> None:
    cache = ObjectCache()
    first: list[tuple[dict[str, Any], dict[str, float]]] = [
        (_node("gpu-0", 1), {}), (_node("gpu-1", 1), {}), (_node("gpu-2", 1), {})]
    cache.replace("nodes", first)
    cache.apply_pending()
    cache.take_changes()
    kept = cache.build_inputs().nodes["gpu-0"]
    cache.replace("nodes", [(_node("gpu-0", 1), {}), (_node("gpu-1", 4), {"k": 1.0})])
    cache.apply_pending()
    assert cache.take_changes() == frozenset({"gpu-1", "gpu-2"})
    inputs = cache.build_inputs()
    assert inputs.nodes["gpu-0"] is kept and sorted(inputs.nodes) == ["gpu-0", "gpu-1"]
    assert inputs.label_times == {"gpu-1": {"k": 1.0}}


def test_small_slots_are_handed_out_again_until_they_change() -> None:
    cache = _synced("gpu-0")
    cache.apply("events", "ADDED", _meta({"metadata": {"name": "e1", "namespace": "default"},
                                          "involvedObject": {"name": "gpu-0"}}, 2), {})
    cache.apply_pending()
    events = cache.build_inputs().events
    assert cache.build_inputs().events is events and len(events) == 1
    cache.apply("events", "ADDED", _meta({"metadata": {"name": "e2", "namespace": "default"},
                                          "involvedObject": {"name": "gpu-0"}}, 3), {})
    cache.apply_pending()
    assert len(cache.build_inputs().events) == 2 and len(events) == 1


def test_objects_is_a_copy_for_other_threads() -> None:
    cache = _synced("gpu-0")
    copy = cache.objects()
    cache.apply("nodes", "ADDED", _node("gpu-1", 2), {})
    cache.apply_pending()
    assert sorted(copy.nodes) == ["gpu-0"] and sorted(cache.objects().nodes) == ["gpu-0", "gpu-1"]


def test_what_a_nodes_only_screen_shows_changes_only_with_the_nodes_themselves() -> None:
    """While the pods load the screen shows only the nodes: per-node MIG ConfigMaps and
    operand pods change the nodes they belong to, but not the Node objects, so a
    half-loaded screen need not be rebuilt for them (4,000 ConfigMaps would rebuild
    4,000 nodes); their changes stay pending for the next build."""
    cache = _synced("n1", "n2")
    config = {"metadata": {"name": "n1-mig-config", "namespace": NS, "resourceVersion": "1"},
              "data": {}}
    cache.replace("configmaps", [(config, {})])
    cache.replace("pods", [(_pod(NS, "driver", "n2"), {})])
    cache.apply_pending()
    assert not cache.node_objects_changed()
    relabelled = _node("n2", rv=2)
    relabelled["metadata"].setdefault("labels", {})["nvidia.com/gpu.deploy.driver"] = "false"
    cache.apply("nodes", "MODIFIED", relabelled, {})
    cache.apply_pending()
    assert cache.node_objects_changed()
    assert cache.take_changes() == {"n1", "n2"}
    assert not cache.node_objects_changed()


def test_a_kubelet_heartbeat_alone_marks_no_node_changed() -> None:
    """The kubelet rewrites each node's status every 5 minutes: at 5,000 nodes, 17 writes a
    second that bump only ``resourceVersion`` and ``lastHeartbeatTime``. The object is kept
    (the next real change is diffed against it) but no node is rebuilt for it; a Ready
    change that comes with its heartbeat still is."""
    cache = ObjectCache()
    first = _node("gpu-0")
    first["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                      "lastHeartbeatTime": "2026-12-01T18:00:00Z"}]
    cache.replace("nodes", [(first, {})])
    cache.replace("pods", [])
    cache.replace("gpu-pods", [])
    cache.apply_pending()
    cache.take_changes()
    beat = _node("gpu-0", 2)
    beat["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                     "lastHeartbeatTime": "2026-12-01T18:05:00Z"}]
    cache.apply("nodes", "MODIFIED", beat, {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset() and not cache.node_objects_changed()
    assert cache.build_inputs().nodes["gpu-0"]["metadata"]["resourceVersion"] == "2"
    down = _node("gpu-0", 3)
    down["status"]["conditions"] = [{"type": "Ready", "status": "False",
                                     "lastHeartbeatTime": "2026-12-01T18:10:00Z"}]
    cache.apply("nodes", "MODIFIED", down, {})
    cache.apply_pending()
    assert cache.take_changes() == frozenset({"gpu-0"})
