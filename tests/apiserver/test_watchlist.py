"""Watch-list (streaming lists) as kube-apiserver 1.34 serves it, and its option checks."""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, node

WATCH_LIST = ("watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
              "&allowWatchBookmarks=true")


def _stream(cluster: EmulatedCluster, query: str, stop_after: int) -> list[dict]:
    """Events of a watch, read until ``stop_after`` arrived or the server ends it."""
    request = urllib.request.Request(f"{cluster.url}/api/v1/nodes?{query}&timeoutSeconds=5")
    events: list[dict] = []
    with urllib.request.urlopen(request, timeout=10) as response:
        for line in response:
            event = json.loads(line)
            if event["type"] == "BOOKMARK" and not event["object"]["metadata"].get(
                    "annotations"):
                continue  # the periodic progress bookmarks carry no news
            events.append(event)
            if len(events) >= stop_after:
                break
    return events


def _summary(events: list[dict]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name")
             or str(e["object"]["metadata"].get("annotations"))) for e in events]


def test_initial_objects_then_the_end_bookmark_then_changes(api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    store.create("nodes", node("gpu-2"))
    list_rv = str(store.resource_version)
    timer = threading.Timer(0.5, lambda: store.create("nodes", node("gpu-3")))
    timer.start()
    events = _stream(api_only, WATCH_LIST, stop_after=4)
    timer.join()
    assert _summary(events) == [("ADDED", "gpu-1"), ("ADDED", "gpu-2"),
                                ("BOOKMARK", "{'k8s.io/initial-events-end': 'true'}"),
                                ("ADDED", "gpu-3")]
    bookmark = events[2]["object"]
    assert bookmark["kind"] == "Node" and bookmark["metadata"]["resourceVersion"] == list_rv


def test_selectors_apply_to_the_initial_events(api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    api_only.store.create("nodes", node("gpu-2"))
    events = _stream(api_only, WATCH_LIST + "&fieldSelector=metadata.name%3Dgpu-2", 2)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[0]["object"]["metadata"]["name"] == "gpu-2"


def test_send_initial_events_false_starts_at_the_given_version(
        api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("nodes", node("gpu-1"))
    since = store.resource_version
    store.create("nodes", node("gpu-2"))
    events = _stream(api_only, f"watch=true&sendInitialEvents=false&resourceVersionMatch="
                               f"NotOlderThan&resourceVersion={since}", stop_after=1)
    assert _summary(events) == [("ADDED", "gpu-2")]


@pytest.mark.parametrize(("query", "message"), [
    ("watch=true&sendInitialEvents=true",
     ("resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
     "resourceVersionMatch to NotOlderThan")),
    ("watch=true&resourceVersionMatch=NotOlderThan",
     ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
     "sendInitialEvents is provided")),
    ("watch=true&sendInitialEvents=true&resourceVersionMatch=Exact",
     ("[resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
     "resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "
     '"Exact": supported values: "NotOlderThan"]')),
    ("sendInitialEvents=true",
     "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
])
def test_bad_options_are_422_before_any_stream(api_only: EmulatedCluster, query: str,
                                               message: str) -> None:
    status, body = http(api_only, "GET", f"/api/v1/nodes?{query}")
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert body["details"]["kind"] == "ListOptions"
    assert body["details"]["causes"][0]["reason"].startswith("FieldValue")
