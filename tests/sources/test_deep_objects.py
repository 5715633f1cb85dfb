"""An object nested deeper than any real one is refused alone; the rest stays readable.

Issue 27: a ClusterPolicy whose status nested 3,000 levels made ``check`` answer
``internal error: RecursionError`` and the TUI say ``disconnected`` with 0 nodes, although
every node was readable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.decode import FeedDecoder, item_spans
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from tests.conftest import hook_server_requests
from tests.sources.helpers import RecordingBuilder, node, wait_for

DEEP = b'{"a":' * 3000 + b"1" + b"}" * 3000


def _policy(name: str, status: bytes) -> bytes:
    return (b'{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"'
            + name.encode() + b'","resourceVersion":"7"},"spec":{},"status":' + status + b"}")


def _page(*items: bytes) -> bytes:
    return (b'{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","metadata":'
            b'{"resourceVersion":"9"},"items":[' + b",".join(items) + b"]}")


def test_a_page_keeps_every_object_but_the_deep_one() -> None:
    decoder = FeedDecoder(None, lambda obj: (obj, {}))
    page = decoder.page(_page(_policy("first", b'{"state":"ready"}'), _policy("deep", DEEP),
                              _policy("last", b'{"note":"a , ] } \\" inside"}')))
    assert [item[0]["metadata"]["name"] for item in page.items] == ["first", "last"]
    assert page.refused == ("deep: nested too deep",)
    assert page.resource_version == "9"


def test_a_deep_watch_event_is_refused_and_named() -> None:
    decoder = FeedDecoder(None, lambda obj: (obj, {}))
    event = decoder.event(b'{"type":"MODIFIED","object":' + _policy("deep", DEEP) + b"}")
    assert event.item is None and event.refused == "deep: nested too deep"


def test_item_spans_finds_the_items_whatever_their_depth() -> None:
    data = _page(_policy("a", DEEP), b'{"x":[1,2,{"y":"]"}]}')
    spans = item_spans(data)
    assert spans is not None and len(spans) == 2
    assert json.loads(data[spans[1][0]:spans[1][1]]) == {"x": [1, 2, {"y": "]"}]}
    assert item_spans(b'{"metadata":{}}') is None


@pytest.fixture
def deep_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's ClusterPolicy list holds one policy nested 3,000 levels (request it
    before the cluster fixture: the hook wraps servers started after it)."""
    def answer(request: web.Request) -> web.StreamResponse | None:
        if request.path == "/apis/nvidia.com/v1/clusterpolicies" and "watch" not in request.query:
            return web.Response(body=_page(_policy("cluster-policy", DEEP)),
                                content_type="application/json")
        return None

    hook_server_requests(monkeypatch, answer)


def test_the_live_source_keeps_the_nodes_and_says_which_object_it_refused(
        deep_policy: None, api_only: EmulatedCluster, tmp_path: Path) -> None:
    """The TUI's source: nodes shown, the header names the refused policy, and the policy
    is unreadable (not "missing")."""
    api_only.store.create("nodes", node("gpu-0"))
    builder = RecordingBuilder()
    source = KubeSource(load_target(str(api_only.write_kubeconfig(tmp_path / "kc"))),
                        builder=builder, coalesce=0.05, rebuild_every=60, watch_timeout=5,
                        backoff_cap=0.3)
    statuses: list[SourceStatus] = []
    source.start(lambda snapshot: None, statuses.append)
    try:
        wait_for(lambda: builder.count() and "gpu-0" in builder.last.nodes
                 and builder.last.unreadable.get("clusterpolicies") == "refused",
                 what="nodes and the refused policy")
        wait_for(lambda: any("not read (cluster-policy: nested too deep)" in s.message
                             for s in statuses), what="the header's line")
    finally:
        source.stop()
    assert statuses[-1].connection is Connection.LIVE
