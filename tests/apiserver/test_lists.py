"""Lists: selectors, limit/continue paging, resourceVersion and Table responses."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, node, pod

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
def seeded(api_only: EmulatedCluster) -> EmulatedCluster:
    store = api_only.store
    for index in range(7):
        product = "H100" if index % 2 else "A100"
        labels = {"nvidia.com/gpu.product": product, "rack": f"r{index % 3}"}
        if index == 0:
            labels["nvidia.com/gpu.deploy.driver"] = "false"
        store.create("nodes", node(f"gpu-{index}", labels))
    store.create("pods", pod("a", "gpu-1", namespace="gpu-operator"))
    store.create("pods", pod("b", "gpu-2", namespace="gpu-operator"))
    store.create("pods", pod("c", "gpu-1", namespace="default"))
    return api_only


def names(items: list[dict]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


def test_label_selectors(core: k8s.CoreV1Api, seeded: EmulatedCluster) -> None:
    listed = core.list_node(label_selector="nvidia.com/gpu.product=H100")
    assert [n.metadata.name for n in listed.items] == ["gpu-1", "gpu-3", "gpu-5"]
    assert listed.kind == "NodeList" and listed.api_version == "v1"
    assert int(listed.metadata.resource_version) == seeded.store.resource_version
    assert len(core.list_node(label_selector="rack in (r0,r1),nvidia.com/gpu.product!=H100")
               .items) == 3
    assert [n.metadata.name for n in core.list_node(
        label_selector="nvidia.com/gpu.deploy.driver").items] == ["gpu-0"]
    assert len(core.list_node(label_selector="!nvidia.com/gpu.deploy.driver").items) == 6
    assert len(core.list_node(label_selector="rack notin (r0)").items) == 4
    with pytest.raises(ApiException) as error:
        core.list_node(label_selector="rack in (r0")
    assert error.value.status == 400


def test_field_selectors(core: k8s.CoreV1Api, seeded: EmulatedCluster) -> None:
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=gpu-1")
    assert [(p.metadata.namespace, p.metadata.name) for p in on_node.items] == \
        [("default", "c"), ("gpu-operator", "a")]
    scoped = core.list_namespaced_pod("gpu-operator", field_selector="status.phase=Running")
    assert [p.metadata.name for p in scoped.items] == ["a", "b"]
    assert [n.metadata.name for n in core.list_node(
        field_selector="metadata.name=gpu-4").items] == ["gpu-4"]
    with pytest.raises(ApiException) as error:
        core.list_node(field_selector="spec.nodeName=gpu-1")
    assert error.value.status == 400 and "field label not supported" in error.value.body
    seeded.store.create("events", {
        "metadata": {"name": "e1", "namespace": "default"}, "reason": "Cordon",
        "involvedObject": {"kind": "Node", "name": "gpu-1"}, "type": "Normal"})
    events = core.list_event_for_all_namespaces(
        field_selector="involvedObject.kind=Node,involvedObject.name=gpu-1,reason=Cordon")
    assert [e.metadata.name for e in events.items] == ["e1"]


def test_paging_is_stable(core: k8s.CoreV1Api, seeded: EmulatedCluster) -> None:
    first = core.list_node(limit=3)
    assert len(first.items) == 3 and first.metadata._continue
    assert first.metadata.remaining_item_count == 4
    seeded.store.create("nodes", node("gpu-00"))  # sorts before the continue key: not seen
    second = core.list_node(limit=3, _continue=first.metadata._continue)
    third = core.list_node(limit=3, _continue=second.metadata._continue)
    assert second.metadata.resource_version == first.metadata.resource_version
    seen = [n.metadata.name for page in (first, second, third) for n in page.items]
    assert seen == [f"gpu-{i}" for i in range(7)]
    assert not third.metadata._continue
    with pytest.raises(ApiException) as error:
        core.list_node(limit=3, _continue="garbage!")
    assert error.value.status == 400


def test_resource_version_zero_and_big_list_streams(seeded: EmulatedCluster) -> None:
    for index in range(100):
        seeded.store.create("configmaps", {"metadata": {"name": f"cm-{index:03}",
                                                        "namespace": "default"}})
    code, body = http(seeded, "GET", "/api/v1/configmaps?resourceVersion=0")
    assert code == 200 and body["kind"] == "ConfigMapList" and len(body["items"]) == 100
    code, body = http(seeded, "GET", "/api/v1/namespaces/gpu-operator/pods")
    assert names(body["items"]) == ["a", "b"]


def test_tables(seeded: EmulatedCluster) -> None:
    code, table = http(seeded, "GET", "/api/v1/nodes?labelSelector=rack%3Dr1",
                       headers={"Accept": TABLE})
    assert code == 200 and table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    columns = [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0]
    assert columns == ["Name", "Status", "Roles", "Age", "Version"]
    assert [row["cells"][0] for row in table["rows"]] == ["gpu-1", "gpu-4"]
    assert table["rows"][0]["cells"][1] == "Ready"
    assert table["rows"][0]["object"]["kind"] == "Node"
    beta = TABLE.replace("v=v1;", "v=v1beta1;")
    code, single = http(seeded, "GET", "/api/v1/namespaces/default/pods/c",
                        headers={"Accept": beta})
    assert single["apiVersion"] == "meta.k8s.io/v1beta1"
    assert single["rows"][0]["cells"][:4] == ["c", "1/1", "Running", "0"]


def test_big_table_is_streamed_whole(api_only: EmulatedCluster) -> None:
    for index in range(150):
        api_only.store.create("nodes", node(f"n-{index:03}"))
    code, table = http(api_only, "GET", "/api/v1/nodes", headers={"Accept": TABLE})
    assert code == 200 and len(table["rows"]) == 150
    assert table["rows"][-1]["object"]["metadata"]["name"] == "n-149"
    code, listed = http(api_only, "GET", "/api/v1/nodes?limit=100")
    assert len(listed["items"]) == 100 and listed["metadata"]["remainingItemCount"] == 50
