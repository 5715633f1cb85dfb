"""The three patch types through the client and raw HTTP, and the patch algorithms alone."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.domain.merge_patch import merge_patch
from gputui.sim.apiserver.patch import json_patch, strategic_merge
from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, node, pod, seed_cluster_policy

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def test_merge_patch_rfc7386() -> None:
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2], "x": 1}
    assert merge_patch(target, {"a": {"b": None, "d": 3}, "l": [3], "x": None}) == \
        {"a": {"c": 2, "d": 3}, "l": [3]}
    assert target == {"a": {"b": 1, "c": 2}, "l": [1, 2], "x": 1}


def test_strategic_merge_keys_and_directives() -> None:
    spec = {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}],
            "tolerations": [{"key": "x"}],
            "containers": [{"name": "c1", "image": "i1", "env": [{"name": "E", "value": "1"}]}]}
    patched = strategic_merge(spec, {
        "taints": [{"key": "a", "$patch": "delete"}, {"key": "c", "effect": "NoSchedule"}],
        "tolerations": [{"key": "y"}],
        "containers": [{"name": "c1", "env": [{"name": "F", "value": "2"}]}],
        "$retainKeys": ["taints"], "$setElementOrder/taints": [{"key": "c"}]})
    assert [t["key"] for t in patched["taints"]] == ["b", "c"]
    assert patched["tolerations"] == [{"key": "y"}]
    assert patched["containers"][0]["image"] == "i1"
    assert [e["name"] for e in patched["containers"][0]["env"]] == ["E", "F"]
    assert strategic_merge({"a": {"b": 1}}, {"a": {"$patch": "delete"}}) == {}
    assert strategic_merge({"a": {"b": 1, "c": 2}}, {"a": {"$patch": "replace", "d": 1}}) == \
        {"a": {"d": 1}}
    conditions = strategic_merge({"conditions": [{"type": "Ready", "status": "True"}]},
                                 {"conditions": [{"type": "Ready", "status": "False"}]})
    assert conditions == {"conditions": [{"type": "Ready", "status": "False"}]}


def test_json_patch_rfc6902() -> None:
    doc = {"metadata": {"labels": {"a/b": "1"}}, "list": [1, 2]}
    ops = [{"op": "test", "path": "/metadata/labels/a~1b", "value": "1"},
           {"op": "add", "path": "/list/-", "value": 3},
           {"op": "replace", "path": "/list/0", "value": 0},
           {"op": "copy", "from": "/list/1", "path": "/copied"},
           {"op": "move", "from": "/copied", "path": "/moved"},
           {"op": "remove", "path": "/metadata/labels/a~1b"}]
    assert json_patch(doc, ops) == {"metadata": {"labels": {}}, "list": [0, 2, 3], "moved": 2}
    assert doc["list"] == [1, 2]


def test_patch_types_through_client(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", {**node("gpu-1"), "spec": {"taints": [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}})
    core.patch_node("gpu-1", {"spec": {"taints": [{"key": "maintenance", "effect": "NoExecute"}]}})
    assert [t["key"] for t in store.get("nodes", "gpu-1")["spec"]["taints"]] == \
        ["nvidia.com/gpu", "maintenance"]
    core.patch_node("gpu-1", [{"op": "add", "path": "/metadata/labels/jp", "value": "yes"}])
    assert store.get("nodes", "gpu-1")["metadata"]["labels"]["jp"] == "yes"
    code, body = http(api_only, "PATCH", "/api/v1/nodes/gpu-1",
                      {"metadata": {"labels": {"jp": None}}}, MERGE)
    assert code == 200 and "jp" not in body["metadata"]["labels"]
    code, body = http(api_only, "PATCH", "/api/v1/nodes/gpu-1",
                      [{"op": "test", "path": "/spec/unschedulable", "value": True}], JSON_PATCH)
    assert (code, body["reason"]) == (422, "Invalid")
    code, body = http(api_only, "PATCH", "/api/v1/nodes/gpu-1", {}, "application/yaml")
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    code, body = http(api_only, "PATCH", "/api/v1/nodes/nope", {}, MERGE)
    assert code == 404
    code, body = http(api_only, "PATCH", "/api/v1/nodes/gpu-1",
                      {"metadata": {"resourceVersion": "1"}}, MERGE)
    assert (code, body["reason"]) == (409, "Conflict")


def test_custom_resources_reject_strategic_merge(custom: k8s.CustomObjectsApi,
                                                 api_only: EmulatedCluster) -> None:
    seed_cluster_policy(api_only.store)
    code, body = http(api_only, "PATCH", "/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
                      {"spec": {"driver": {"enabled": False}}}, STRATEGIC)
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    custom.patch_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy",
                                       {"spec": {"driver": {"enabled": False}}})
    stored = api_only.store.get("clusterpolicies.nvidia.com", "cluster-policy")
    assert stored["spec"]["driver"] == {"enabled": False, "version": "550.54.15"}
    assert stored["metadata"]["generation"] == 2


def test_strategic_patch_pod_containers(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    api_only.store.create("pods", pod("p", "gpu-1", containers=("a", "b")))
    core.patch_namespaced_pod("p", "default", {"spec": {"containers": [
        {"name": "b", "image": "new"}]}})
    containers = api_only.store.get("pods", "p", "default")["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("a", "busybox"), ("b", "new")]
    with pytest.raises(ApiException) as error:
        core.patch_namespaced_pod("p", "default", {"metadata": {"annotations": {"x y": "1"}}})
    assert error.value.status == 422


def test_strategic_primitive_lists() -> None:
    meta = {"finalizers": ["a", "b"]}
    assert strategic_merge(meta, {"finalizers": ["c", "a"]}) == {"finalizers": ["a", "b", "c"]}
    assert strategic_merge(meta, {"$deleteFromPrimitiveList/finalizers": ["a"]}) == \
        {"finalizers": ["b"]}
    assert strategic_merge({"args": ["x"]}, {"args": ["y"]}) == {"args": ["y"]}
