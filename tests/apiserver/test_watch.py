"""Watch through the kubernetes client: initial state, resume, 410, bookmarks, selectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest
from kubernetes import client as k8s
from kubernetes import watch
from kubernetes.client.rest import ApiException

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, node, pod


def _label(cluster: EmulatedCluster, name: str, key: str, value: str | None) -> None:
    def change(obj: dict) -> None:
        labels = obj["metadata"].setdefault("labels", {})
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value

    cluster.store.mutate("nodes", name, None, change)


def _events(stream: object) -> list[tuple[str, str]]:
    return [(e["type"], e["raw_object"]["metadata"].get("name", "")) for e in stream]


def test_initial_state_then_live_events_from_another_thread(
        core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    store.create("nodes", node("gpu-2"))

    def writer() -> None:
        store.create("nodes", node("gpu-3"))
        _label(api_only, "gpu-1", "x", "1")
        store.delete("nodes", "gpu-2")

    seen: list[tuple[str, str]] = []
    watcher = watch.Watch()
    for event in watcher.stream(core.list_node, timeout_seconds=10):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 2:
            threading.Thread(target=writer).start()
        if len(seen) == 5:
            watcher.stop()
    assert seen == [("ADDED", "gpu-1"), ("ADDED", "gpu-2"), ("ADDED", "gpu-3"),
                    ("MODIFIED", "gpu-1"), ("DELETED", "gpu-2")]


def test_resume_from_resource_version(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    rv = core.list_node().metadata.resource_version
    _label(api_only, "gpu-1", "a", "1")
    store.create("nodes", node("gpu-2"))
    store.create("configmaps", {"metadata": {"name": "other", "namespace": "default"}})
    stream = watch.Watch().stream(core.list_node, resource_version=rv, timeout_seconds=1)
    assert _events(stream) == [("MODIFIED", "gpu-1"), ("ADDED", "gpu-2")]


def test_expired_resource_version_gives_410_then_relist(core: k8s.CoreV1Api,
                                                        api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    old = core.list_node().metadata.resource_version
    _label(api_only, "gpu-1", "a", "1")
    store.compact("nodes")
    code, text = http(api_only, "GET", f"/api/v1/nodes?watch=1&resourceVersion={old}",
                      text=True)
    error = json.loads(text.splitlines()[0])
    assert code == 200 and error["type"] == "ERROR"
    assert (error["object"]["code"], error["object"]["reason"]) == (410, "Expired")
    with pytest.raises(ApiException) as raised:
        list(watch.Watch().stream(core.list_node, resource_version=old, timeout_seconds=1))
    assert raised.value.status == 410
    fresh = core.list_node().metadata.resource_version
    _label(api_only, "gpu-1", "b", "2")
    stream = watch.Watch().stream(core.list_node, resource_version=fresh, timeout_seconds=1)
    assert _events(stream) == [("MODIFIED", "gpu-1")]


def test_bookmarks_and_timeout(api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    rv = api_only.store.resource_version
    api_only.store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
    code, text = http(api_only, "GET", f"/api/v1/nodes?watch=true&resourceVersion={rv}"
                      "&allowWatchBookmarks=true&timeoutSeconds=2", text=True)
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 200 and lines and all(e["type"] == "BOOKMARK" for e in lines)
    bookmark = lines[0]["object"]
    # the zero value of a Node, as kube-apiserver's watch cache encodes it
    assert list(bookmark)[:3] == ["kind", "apiVersion", "metadata"]
    assert bookmark["metadata"] == {"resourceVersion": str(api_only.store.resource_version)}
    assert bookmark["spec"] == {} and bookmark["status"]["nodeInfo"]["kubeletVersion"] == ""


def test_pod_bookmarks_carry_the_zero_pod_as_the_real_server_sends(
        core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    api_only.store.create("pods", pod("p-0", "gpu-1"))
    rv = str(api_only.store.resource_version)
    code, text = http(api_only, "GET", f"/api/v1/pods?watch=true&resourceVersion={rv}"
                      "&allowWatchBookmarks=true&timeoutSeconds=2", text=True)
    bookmark = json.loads(text.splitlines()[0])
    assert code == 200 and bookmark == {"type": "BOOKMARK", "object": {
        "kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv},
        "spec": {"containers": None}, "status": {}}}
    # the kubernetes client reads it as a bookmark (its typed Pod model refuses nothing)
    stream = watch.Watch().stream(core.list_pod_for_all_namespaces, resource_version=rv,
                                  allow_watch_bookmarks=True, timeout_seconds=2)
    kinds = {event["type"] for event in stream}
    assert kinds == {"BOOKMARK"}


def test_timeout_ends_client_stream(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    rv = core.list_node().metadata.resource_version
    assert list(watch.Watch().stream(core.list_node, resource_version=rv,
                                     timeout_seconds=1)) == []
    bookmarks = watch.Watch().stream(core.list_node, resource_version=rv,
                                     allow_watch_bookmarks=True, timeout_seconds=2)
    assert {e["type"] for e in bookmarks} == {"BOOKMARK"}


def test_selector_transitions(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    store.create("nodes", node("gpu-2"))
    rv = core.list_node().metadata.resource_version
    _label(api_only, "gpu-1", "team", "a")   # starts matching: ADDED
    _label(api_only, "gpu-1", "other", "x")  # still matching: MODIFIED
    _label(api_only, "gpu-2", "other", "x")  # never matches: nothing
    _label(api_only, "gpu-1", "team", "b")   # stops matching: DELETED
    store.delete("nodes", "gpu-1")           # was not matching: nothing
    stream = watch.Watch().stream(core.list_node, resource_version=rv, label_selector="team=a",
                                  timeout_seconds=1)
    assert _events(stream) == [("ADDED", "gpu-1"), ("MODIFIED", "gpu-1"), ("DELETED", "gpu-1")]


def test_namespaced_field_selector_watch(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("pods", pod("p-other-node", "gpu-2"))
    store.create("pods", pod("p-here", "gpu-1"))
    store.create("pods", pod("p-elsewhere", "gpu-1", namespace="kube-system"))
    stream = watch.Watch().stream(core.list_namespaced_pod, "default",
                                  field_selector="spec.nodeName=gpu-1", timeout_seconds=1)
    assert _events(stream) == [("ADDED", "p-here")]
    code, _ = http(api_only, "GET", "/api/v1/pods?watch=true&fieldSelector=spec.bogus%3D1")
    assert code == 400


def test_table_watch_for_kubectl_get_w(api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    code, text = http(api_only, "GET", "/api/v1/nodes?watch=1&timeoutSeconds=1", headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}, text=True)
    event = json.loads(text.splitlines()[0])
    assert code == 200 and event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][:2] == ["gpu-1", "Ready"]


def test_legacy_watch_path_for_one_object(api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    api_only.store.create("nodes", node("gpu-2"))
    code, text = http(api_only, "GET", "/api/v1/watch/nodes/gpu-2?timeoutSeconds=1", text=True)
    events = [json.loads(line) for line in text.splitlines()]
    assert code == 200
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "gpu-2")]


def test_watch_of_a_vanished_client_is_released(api_only: EmulatedCluster,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from gputui.sim.apiserver import watch as watch_module
    from gputui.sim.apiserver.common import CTX_KEY

    monkeypatch.setattr(watch_module, "LIVENESS_CHECK_S", 0.1)
    ctx = api_only._runner.app[CTX_KEY]
    conn = socket.create_connection(("127.0.0.1", api_only.port))
    conn.sendall(b"GET /api/v1/nodes?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert conn.recv(100).startswith(b"HTTP/1.1 200")
    assert _eventually(lambda: len(ctx.watch_queues) == 1)
    conn.close()
    assert _eventually(lambda: not ctx.watch_queues)


def _eventually(check: Callable[[], bool]) -> bool:
    import time

    for _ in range(100):
        if check():
            return True
        time.sleep(0.05)
    return False
