"""One-pass decoding: list pages and watch events straight into what the cache keeps."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gputui.domain.pods import read_pod
from gputui.sources.decode import (
    GPU_PODS,
    NODES,
    OPERATOR_PODS,
    decoder_for,
    reduce_gpu_pod,
    reduce_node,
    reduce_operator_pod,
)
from gputui.sources.reduce import reduce_plain
from tests.sources.helpers import MANAGED, node, pod


def page(items: list[dict[str, Any]], token: str = "") -> bytes:
    metadata = {"resourceVersion": "42", **({"continue": token} if token else {})}
    return json.dumps({"kind": "List", "apiVersion": "v1", "metadata": metadata,
                       "items": items}).encode()


def operand_pod(name: str, node_name: str) -> dict[str, Any]:
    raw = pod("gpu-operator", name, node_name, labels={"app": "nvidia-driver-daemonset"})
    raw["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                           "name": "nvidia-driver-daemonset", "uid": "u"}]
    raw["spec"]["volumes"] = [{"name": "run", "emptyDir": {}},
                              {"name": "host", "hostPath": {"path": "/run"}}]
    raw["status"]["containerStatuses"] = [{"name": "main", "ready": False, "restartCount": 3,
                                           "imageID": "sha256:x",
                                           "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                           "lastState": {}}]
    raw["status"]["conditions"] = [{"type": "Ready", "status": "True"},
                                   {"type": "PodScheduled", "status": "False",
                                    "reason": "Unschedulable", "lastProbeTime": None}]
    return raw


def test_a_page_decodes_to_exactly_what_the_dict_path_keeps() -> None:
    """Typed page decoding and the dict path (fixtures, replay) keep the same fields, by
    construction (one shape each); non-GPU workload pods are dropped on the way."""
    nodes = [node(f"n{i}") for i in range(3)]
    for raw in nodes:
        raw["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
        raw["status"]["images"] = [{"names": ["driver:550"], "sizeBytes": 1}]
    decoded = NODES.page(page(nodes, token="next"))
    assert decoded.continue_token == "next" and decoded.resource_version == "42"
    assert decoded.items == [reduce_node(raw) for raw in nodes]
    kept, times = decoded.items[0]
    assert "managedFields" not in kept["metadata"] and "images" not in kept["status"]
    assert set(times) == {"nvidia.com/mig.config.state", "nvidia.com/gpu.present"}

    operands = [operand_pod(f"d{i}", f"n{i}") for i in range(2)]
    assert OPERATOR_PODS.page(page(operands)).items == [reduce_operator_pod(p) for p in operands]
    # what the shape skips is nothing the domain reads: decoded, the pod reads as the raw one
    first, _ = OPERATOR_PODS.page(page(operands)).items[0]
    assert first == read_pod(operands[0])
    assert (first.status, first.restarts, first.daemonset, first.unschedulable) == (
        "CrashLoopBackOff", 3, "nvidia-driver-daemonset", "Unschedulable")

    workloads = [pod("ml", "train", "n1", gpus=2), pod("ml", "web", "n2")]
    decoded_gpu = GPU_PODS.page(page(workloads)).items
    assert decoded_gpu == [reduce_gpu_pod(workloads[0])]
    assert reduce_gpu_pod(workloads[1]) is None


def test_watch_events_decode_objects_errors_and_bookmarks() -> None:
    raw = node("n1")
    raw["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
    event = NODES.event(json.dumps({"type": "MODIFIED", "object": raw}).encode())
    assert event.type == "MODIFIED" and event.item == reduce_node(raw)
    assert event.object["metadata"]["name"] == "n1"

    gone = GPU_PODS.event(json.dumps({"type": "DELETED",
                                      "object": pod("ml", "web", "n2")}).encode())
    assert gone.item is None and gone.object["metadata"]["name"] == "web"  # key kept

    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410,
              "reason": "Expired", "message": "too old resource version"}
    error = NODES.event(json.dumps({"type": "ERROR", "object": status}).encode())
    assert error.type == "ERROR" and error.object["code"] == 410 and error.item is None

    bookmark = NODES.event(b'{"type":"BOOKMARK","object":{"kind":"Node",'
                           b'"metadata":{"resourceVersion":"77"}}}')
    assert bookmark.object["metadata"]["resourceVersion"] == "77" and bookmark.item is None


def test_an_odd_object_costs_speed_not_the_page() -> None:
    """An object that does not fit the shape (a label value that is not a string) is
    dropped alone; the rest of the page decodes."""
    odd = node("odd")
    odd["metadata"]["labels"]["weird"] = 7
    good = node("good")
    items = NODES.page(page([odd, good])).items
    assert [kept["metadata"]["name"] for kept, _ in items] == ["good"]


def test_garbage_is_a_value_error_and_small_feeds_use_their_reducer() -> None:
    with pytest.raises(ValueError):
        NODES.page(b"<html>proxy error</html>")
    with pytest.raises(ValueError):
        NODES.event(b"{not json")
    policy = {"metadata": {"name": "cluster-policy", "managedFields": [{"manager": "x"}]},
              "spec": {"driver": {"enabled": True}}}
    decoded = decoder_for(reduce_plain).page(page([policy])).items
    assert decoded == [reduce_plain(policy)]
    assert "managedFields" not in decoded[0][0]["metadata"]


def test_pending_operand_pods_stay_tied_to_their_node_through_the_typed_decoder() -> None:
    """A pod the scheduler has not placed names its node only in its node selector (the
    validators) or its DaemonSet node affinity: the decoder must keep both, or the pending
    pod of a stuck node vanishes from that node's pipeline."""
    validator = pod("gpu-operator", "nvidia-cuda-validator-x", "")
    validator["spec"] = {"nodeSelector": {"kubernetes.io/hostname": "n7"},
                         "containers": [{"name": "cuda-validation"}]}
    plugin = pod("gpu-operator", "nvidia-device-plugin-daemonset-y", "")
    plugin["spec"] = {"containers": [{"name": "plugin"}], "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n8"]}]}]}}}}
    decoded = [item for item, _ in OPERATOR_PODS.page(page([validator, plugin])).items]
    assert [(p.name, p.node, p.placement) for p in decoded] == [
        ("nvidia-cuda-validator-x", "", "n7"), ("nvidia-device-plugin-daemonset-y", "", "n8")]


def test_a_page_with_nothing_to_clean_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its bytes say so (no escape of a control character, no unsafe UTF-8): the decoded
    objects go to the cache as they are, without a walk or an encoding back."""
    def no_walk(objects: list[Any], refused: list[str]) -> list[Any]:
        raise AssertionError("a clean page was walked")
    nodes = [node(f"n{i}") for i in range(3)]
    nodes[0]["metadata"]["annotations"] = {"note": 'json "inside", a\nmessage', "x": "caf\u00e9"}
    expected = [reduce_node(raw) for raw in nodes]
    monkeypatch.setattr("gputui.sources.decode._cleaned", no_walk)
    assert NODES.page(json.dumps({"items": nodes}, ensure_ascii=False).encode()
                      ).items == expected
    event = NODES.event(json.dumps({"type": "ADDED", "object": nodes[0]}).encode())
    assert event.item == expected[0]


def test_a_page_with_one_hostile_string_is_cleaned_as_the_dict_path_cleans_it() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    nodes[1]["metadata"]["labels"]["title"] = "\x1b]2;PWNED\x07"
    nodes[2]["metadata"]["annotations"] = {"bad\nkey": "user\u202eexe"}
    for data in (json.dumps({"items": nodes}).encode(),
                 json.dumps({"items": nodes}, ensure_ascii=False).encode()):
        items = NODES.page(data).items
        assert items == [reduce_node(raw) for raw in nodes]
        assert items[1][0]["metadata"]["labels"]["title"] == "\\x1b]2;PWNED\\x07"
        assert items[2][0]["metadata"]["annotations"] == {"bad\\nkey": "user\\u202eexe"}
        event = NODES.event(json.dumps({"type": "MODIFIED", "object": nodes[1]}).encode())
        assert event.item == items[1]
