"""Bookmarks shaped as the real API server's keep a quiet feed's place under churn.

The short run of ``benchmarks/soak_bookmarks.py`` (10 minutes there): the emulated server
sends the zero Pod as its bookmark (``"spec": {"containers": null}``), keeps a short event
history, and ends each watch after 2 s; pods churn in a namespace the feed does not watch.
A feed that reads bookmarks by resourceVersion resumes where the server said it was and never
relists; one that drops them for their shape relisted 8 times in 12 s.
"""

from __future__ import annotations

from benchmarks.soak_bookmarks import soak
from gputui.sources.decode import OPERATOR_PODS


def test_a_feed_under_churn_resumes_from_bookmarks_without_relisting() -> None:
    result = soak(12.0, history=40, bookmarks=0.25, watch_timeout=2, churn=40.0)
    assert result.churned > 200  # the history (40 events) overflowed many times
    assert result.watches >= 4  # the watch timeout forced reconnects
    assert result.bookmarks >= 10
    assert result.lists == 1, f"{result.relists} relists: {result.states}"


def test_a_real_pod_bookmark_is_read_by_its_resource_version_alone() -> None:
    line = (b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":'
            b'{"resourceVersion":"523"},"spec":{"containers":null},"status":{}}}')
    event = OPERATOR_PODS.event(line)
    assert (event.type, event.object, event.item) == (
        "BOOKMARK", {"metadata": {"resourceVersion": "523"}}, None)
