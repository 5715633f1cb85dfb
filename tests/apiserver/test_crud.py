"""get/create/update/delete through the kubernetes client, with the real server's errors."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, node, pod


def _status(error: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    import json

    body = json.loads(error.value.body)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    return body["code"], body["reason"]


def test_create_get_and_duplicate(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    created = core.create_namespaced_config_map(
        "default", k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="cm1"), data={"a": "1"}))
    assert created.metadata.resource_version and created.metadata.uid
    got = core.read_namespaced_config_map("cm1", "default")
    assert got.data == {"a": "1"} and got.kind == "ConfigMap" and got.api_version == "v1"
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm1"}})
    assert error.value.status == 409 and _status(error) == (409, "AlreadyExists")
    entry = api_only.store.get("configmaps", "cm1", "default")["metadata"]["managedFields"][0]
    assert entry["manager"] == "OpenAPI-Generator"


def test_not_found_and_bad_body(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    with pytest.raises(ApiException) as error:
        core.read_node("nope")
    assert _status(error) == (404, "NotFound")
    cluster = api_only
    code, body = http(cluster, "POST", "/api/v1/namespaces/default/configmaps", "{not json")
    assert (code, body["reason"]) == (400, "BadRequest")
    code, body = http(cluster, "PUT", "/api/v1/nodes", {})
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    code, body = http(cluster, "GET", "/api/v1/widgets")
    assert (code, body["kind"]) == (404, "Status")
    code, body = http(cluster, "POST", "/api/v1/pods", {"metadata": {"name": "x"}})
    assert code == 405
    code, body = http(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                      {"kind": "Pod", "metadata": {"name": "x"}})
    assert code == 400


def test_update_conflict(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    current = core.read_node("gpu-1")
    current.metadata.labels["team"] = "a"
    updated = core.replace_node("gpu-1", current)
    assert int(updated.metadata.resource_version) > int(current.metadata.resource_version)
    current.metadata.labels["team"] = "b"  # stale resourceVersion now
    with pytest.raises(ApiException) as error:
        core.replace_node("gpu-1", current)
    assert _status(error) == (409, "Conflict")
    assert api_only.store.get("nodes", "gpu-1")["metadata"]["labels"]["team"] == "a"


def test_invalid_labels_are_422(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    for labels in ({"bad key": "x"}, {"ok": "-starts-with-dash"}, {"a" * 64: "v"},
                   {"UPPER.example.com/x": "v"}, {"ok": "v" * 64}):
        with pytest.raises(ApiException) as error:
            core.create_node({"metadata": {"name": "n1", "labels": labels}})
        assert _status(error) == (422, "Invalid"), labels
    with pytest.raises(ApiException) as error:
        core.create_node({"metadata": {"name": "n1", "annotations": {"bad/key/x": "v"}}})
    assert _status(error) == (422, "Invalid")
    good = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "empty": "", "a_b.c-d": "x"}
    assert core.create_node({"metadata": {"name": "n1", "labels": good}}).metadata.labels == good
    api_only.store.create("nodes", node("gpu-2"))
    with pytest.raises(ApiException) as error:
        core.patch_node("gpu-2", {"metadata": {"labels": {"bad label": "x"}}})
    assert _status(error) == (422, "Invalid")


def test_dry_run_stores_nothing(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    rv = store.resource_version
    seen: list[object] = []
    handle, _ = store.watch("nodes", seen.append)
    made = core.create_node({"metadata": {"name": "dry"}}, dry_run="All")
    assert made.metadata.name == "dry" and store.get("nodes", "dry") is None
    patched = core.patch_node("gpu-1", {"spec": {"unschedulable": True}}, dry_run="All")
    assert patched.spec.unschedulable is True
    current = core.read_node("gpu-1")
    current.metadata.labels["x"] = "y"
    assert core.replace_node("gpu-1", current, dry_run="All").metadata.labels["x"] == "y"
    core.delete_node("gpu-1", dry_run="All")
    with pytest.raises(ApiException) as error:
        core.create_node({"metadata": {"name": "Bad_Name"}}, dry_run="All")
    assert error.value.status == 422
    handle.cancel()
    assert store.resource_version == rv and not seen
    assert not store.get("nodes", "gpu-1")["spec"]


def test_delete_returns_object_or_status(core: k8s.CoreV1Api,
                                         api_only: EmulatedCluster) -> None:
    api_only.store.create("pods", pod("p1", "gpu-1"))
    api_only.store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
    body = k8s.V1DeleteOptions(grace_period_seconds=0, propagation_policy="Foreground")
    gone = core.delete_namespaced_pod("p1", "default", body=body)
    assert gone.metadata.name == "p1" and api_only.store.get("pods", "p1", "default") is None
    code, status = http(api_only, "DELETE", "/api/v1/namespaces/default/configmaps/c",
                        {"propagationPolicy": "Background"})
    assert code == 200 and status["kind"] == "Status" and status["status"] == "Success"
    with pytest.raises(ApiException) as error:
        core.delete_namespaced_pod("p1", "default")
    assert error.value.status == 404


def test_delete_precondition_and_collection(core: k8s.CoreV1Api,
                                            api_only: EmulatedCluster) -> None:
    store = api_only.store
    for index in range(3):
        store.create("pods", pod(f"p{index}", "gpu-1", labels={"app": "x" if index else "y"}))
    with pytest.raises(ApiException) as error:
        core.delete_namespaced_pod("p0", "default", body=k8s.V1DeleteOptions(
            preconditions=k8s.V1Preconditions(uid="other")))
    assert error.value.status == 409
    core.delete_collection_namespaced_pod("default", label_selector="app=x")
    assert [p["metadata"]["name"] for p in store.list("pods")[0]] == ["p0"]


def test_status_subresource(core: k8s.CoreV1Api, custom: k8s.CustomObjectsApi,
                            api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    core.patch_node_status("gpu-1", {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": "KubeletDown"}]},
        "metadata": {"labels": {"ignored": "yes"}}})
    stored = store.get("nodes", "gpu-1")
    assert stored["status"]["conditions"][0]["status"] == "False"
    assert "ignored" not in stored["metadata"]["labels"]
    core.patch_node("gpu-1", {"status": {"conditions": []}})  # main resource ignores status
    assert store.get("nodes", "gpu-1")["status"]["conditions"][0]["reason"] == "KubeletDown"
    store.create("clusterpolicies.nvidia.com", {"metadata": {"name": "cp"}, "spec": {}})
    custom.patch_cluster_custom_object_status("nvidia.com", "v1", "clusterpolicies", "cp",
                                              {"status": {"state": "notReady"}})
    current = custom.get_cluster_custom_object_status("nvidia.com", "v1", "clusterpolicies", "cp")
    current["status"]["state"] = "ready"
    custom.replace_cluster_custom_object_status("nvidia.com", "v1", "clusterpolicies", "cp",
                                                current)
    assert store.get("clusterpolicies.nvidia.com", "cp")["status"] == {"state": "ready"}


def test_self_subject_access_review(api: k8s.ApiClient) -> None:
    review = k8s.AuthorizationV1Api(api).create_self_subject_access_review(
        k8s.V1SelfSubjectAccessReview(spec=k8s.V1SelfSubjectAccessReviewSpec(
            resource_attributes=k8s.V1ResourceAttributes(verb="patch", resource="nodes"))))
    assert review.status.allowed is True
