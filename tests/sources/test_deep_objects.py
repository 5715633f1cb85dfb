"""An object nested deeper than any real one is refused alone; the rest stays readable.

Issue 27: a ClusterPolicy whose status nested 3,000 levels made ``check`` answer
``internal error: RecursionError`` and the TUI say ``disconnected`` with 0 nodes, although
every node was readable.
"""

from __future__ import annotations

import json
from pathlib import Path

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.decode import FeedDecoder, item_spans
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from tests.sources.helpers import (  # noqa: F401
    DEEP,
    RecordingBuilder,
    deep_policy,
    node,
    page_bytes,
    policy_bytes,
    wait_for,
)


def test_a_page_keeps_every_object_but_the_deep_one() -> None:
    decoder = FeedDecoder(None, lambda obj: (obj, {}))
    page = decoder.page(page_bytes(policy_bytes("first", b'{"state":"ready"}'),
                                   policy_bytes("deep", DEEP),
                                   policy_bytes("last", b'{"note":"a , ] } \\" inside"}')))
    assert [item[0]["metadata"]["name"] for item in page.items] == ["first", "last"]
    assert page.refused == ("deep: nested too deep",)
    assert page.resource_version == "9"


def test_a_deep_watch_event_is_refused_and_named() -> None:
    decoder = FeedDecoder(None, lambda obj: (obj, {}))
    event = decoder.event(b'{"type":"MODIFIED","object":' + policy_bytes("deep", DEEP) + b"}")
    assert event.item is None and event.refused == "deep: nested too deep"


def test_item_spans_finds_the_items_whatever_their_depth() -> None:
    data = page_bytes(policy_bytes("a", DEEP), b'{"x":[1,2,{"y":"]"}]}')
    spans = item_spans(data)
    assert spans is not None and len(spans) == 2
    assert json.loads(data[spans[1][0]:spans[1][1]]) == {"x": [1, 2, {"y": "]"}]}
    assert item_spans(b'{"metadata":{}}') is None


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
