"""The status tracker's account of what cannot be read, per resource (issue 18)."""

from __future__ import annotations

from gputui.sources.reflector import FeedState
from gputui.sources.resources import unreadable_resources
from gputui.sources.status import StatusTracker


def test_tracker_names_forbidden_and_not_served_resources() -> None:
    tracker = StatusTracker("ctx", "https://x")
    for name in ("nodes", "nodes-nfd", "pods", "gpu-pods", "clusterpolicies", "events"):
        tracker.feed(name, FeedState.SYNCED, "")
    assert tracker.unreadable() == {}
    tracker.feed("gpu-pods", FeedState.FORBIDDEN, "403")
    tracker.feed("nvidiadrivers", FeedState.ABSENT, "404")
    assert tracker.unreadable() == {"gpu-pods": "forbidden", "nvidiadrivers": "not-served"}
    tracker.feed("pods", FeedState.FORBIDDEN, "403")  # every pod: one gap, "pods"
    tracker.feed("nodes-nfd", FeedState.FORBIDDEN, "403")
    assert tracker.unreadable() == {"pods": "forbidden", "nodes": "forbidden",
                                    "nvidiadrivers": "not-served"}
    tracker.feed("pods", FeedState.SYNCED, "")  # RBAC granted since: readable again
    assert "pods" not in tracker.unreadable()


def test_a_403_on_any_feed_of_a_resource_wins_over_a_404() -> None:
    assert unreadable_resources([("clusterpolicies", "not-served"),
                                 ("clusterpolicies", "forbidden")]) == {
        "clusterpolicies": "forbidden"}
    assert unreadable_resources([("clusterpolicies", "forbidden"),
                                 ("clusterpolicies", "not-served")]) == {
        "clusterpolicies": "forbidden"}
