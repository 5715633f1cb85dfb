"""The incident timeline: events derived from two real built snapshots, the store, the
JSON form a recording keeps (read back as hostile input) and action events from audit lines."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from gputui.domain.inputs import XidEvent
from gputui.domain.model import ClusterSnapshot, Severity
from gputui.domain.cluster_id import cluster_id
from gputui.domain.operations import pair_operations
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.timeline import (
    Timeline,
    TimelineEvent,
    action_events,
    derive_events,
    events_from_json,
    make_event,
)
from tests.domain import factory as f

Json = dict[str, Any]
NAMES = ["gpu-a", "gpu-b", "gpu-c"]


def _objects(nodes: list[Json] | None = None, pods: list[Json] | None = None,
             **extra: Any) -> Any:
    nodes = nodes if nodes is not None else [f.node(n) for n in NAMES]
    if pods is None:
        pods = [p for n in nodes for p in f.healthy_pods(n["metadata"]["name"])]
    return f.objects(nodes, pods, daemonsets=[f.daemonset(f.OPERAND_PODS[op][0], len(nodes))
                                              for op in f.CORE], **extra)


def _pair(second: Any, first: Any = None, changed: list[str] | None = None,
          later: float = 30.0) -> tuple[ClusterSnapshot, ClusterSnapshot]:
    """Two snapshots of one builder: the baseline, then ``second`` ``later`` s after."""
    builder = SnapshotBuilder()
    prev = builder.build(first if first is not None else _objects(), f.T0)
    snap = builder.build(second, f.T0 + later, changed_nodes=changed)
    return prev, snap


def _texts(events: list[TimelineEvent]) -> list[tuple[str, str | None, str]]:
    return [(e.kind, e.node, e.text) for e in events]


def test_first_snapshot_is_the_baseline() -> None:
    snap = SnapshotBuilder().build(_objects(), f.T0)
    assert derive_events(None, snap, f.T0) == []


def test_a_driver_crash_is_raised_then_cleared() -> None:
    crashing = [p for n in NAMES for p in f.healthy_pods(n, overrides={"driver": {
        "crash_in": "nvidia-driver-ctr", "restarts": 3}} if n == "gpu-b" else None)]
    prev, snap = _pair(_objects(pods=crashing), changed=["gpu-b"])
    events = derive_events(prev, snap, f.T0 + 30)
    raised = [e for e in events if e.kind == "finding"]
    assert raised and all(e.node == "gpu-b" for e in raised)
    assert any(e.text.startswith("driver-pod-failing: ") and e.severity is Severity.CRITICAL
               for e in raised), _texts(events)
    assert all(e.at == f.T0 + 30 for e in events)
    # the pod is the same one, restarted three times more
    assert ("restart", "gpu-b") in {(e.kind, e.node) for e in events}
    # and back to healthy: cleared, with what it was
    builder = SnapshotBuilder()
    sick = builder.build(_objects(pods=crashing), f.T0)
    well = builder.build(_objects(), f.T0 + 60, changed_nodes=["gpu-b"])
    cleared = [e for e in derive_events(sick, well, f.T0 + 60) if e.kind == "cleared"]
    assert any(e.text.startswith("driver-pod-failing cleared (was: ") for e in cleared)
    assert {e.node for e in cleared} == {"gpu-b"} and all(e.severity is None for e in cleared)


def test_ready_cordon_upgrade_and_mig_changes() -> None:
    nodes = [f.node("gpu-a", ready=False), f.node("gpu-b", cordoned=True),
             f.node("gpu-c", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed",
                                     "nvidia.com/mig.config": "all-1g.10gb",
                                     "nvidia.com/mig.config.state": "failed"})]
    prev, snap = _pair(_objects(nodes=nodes), changed=NAMES)
    got = {(e.kind, e.node): e for e in derive_events(prev, snap, f.T0 + 30)}
    assert got["ready", "gpu-a"].text == "NotReady"
    assert got["ready", "gpu-a"].severity is Severity.WARNING
    assert got["cordon", "gpu-b"].text == "cordoned"
    assert got["upgrade", "gpu-c"].text == "upgrade upgrade-done → upgrade-failed"
    assert got["upgrade", "gpu-c"].severity is Severity.WARNING
    mig = [e for e in derive_events(prev, snap, f.T0 + 30) if e.kind == "mig"]
    assert [(e.text, e.severity) for e in mig][-1] == ("MIG state success → failed",
                                                       Severity.WARNING)


def test_nodes_joining_and_leaving() -> None:
    nodes = [f.node(n) for n in ("gpu-a", "gpu-b", "gpu-d")]
    prev, snap = _pair(_objects(nodes=nodes), changed=["gpu-c", "gpu-d"])
    events = derive_events(prev, snap, f.T0 + 30)
    assert ("join", "gpu-d", "joined the cluster") in _texts(events)
    assert ("leave", "gpu-c", "left the cluster") in _texts(events)
    assert not [e for e in events if e.kind == "cleared"]  # a node gone clears nothing


def test_a_new_xid_is_placed_at_its_own_time() -> None:
    first = _objects(xids={"gpu-a": (XidEvent(0, 48, 0.0, "Double Bit ECC Error"),)})
    second = _objects(xids={"gpu-a": (XidEvent(0, 48, 0.0, "Double Bit ECC Error"),
                                      XidEvent(3, 79, f.T0 + 12, ""))})
    prev, snap = _pair(second, first, changed=[])
    events = derive_events(prev, snap, f.T0 + 30)
    xids = [e for e in events if e.kind == "xid"]
    assert [(e.node, e.at, e.severity) for e in xids] == [("gpu-a", f.T0 + 12,
                                                           Severity.CRITICAL)]
    assert xids[0].text.startswith("XID 79 on GPU 3: ")
    # the xid-error finding is not said twice; the XID of unknown time was the baseline
    assert not [e for e in events if e.text.startswith("xid-error")]


def test_loading_gives_nothing() -> None:
    builder = SnapshotBuilder()
    prev = builder.build(_objects(), f.T0)
    loading = builder.build(_objects(nodes=[f.node("gpu-a", ready=False)],
                                     loading=frozenset({"pods"})), f.T0 + 30)
    assert loading.loading
    assert derive_events(prev, loading, f.T0 + 30) == []
    assert derive_events(loading, prev, f.T0 + 30) == []


def test_what_became_unreadable_is_not_cleared() -> None:
    crashing = [p for n in NAMES for p in f.healthy_pods(n, overrides={"driver": {
        "crash_in": "nvidia-driver-ctr", "restarts": 3}} if n == "gpu-b" else None)]
    builder = SnapshotBuilder()
    sick = builder.build(_objects(pods=crashing), f.T0)
    forbidden = builder.build(_objects(pods=[], unreadable={"pods": "forbidden"},
                                       forbidden=frozenset({"pods"})), f.T0 + 30)
    assert not any(fi.code == "driver-pod-failing" for fi in forbidden.findings)
    events = derive_events(sick, forbidden, f.T0 + 30)
    assert not [e for e in events if e.kind in ("cleared", "finding", "restart")]
    assert [(e.kind, e.text) for e in events] == [
        ("read", "cannot read pods (403) any more: what it feeds is unknown")]
    # readable again: the finding seen again was not "raised" now
    back = builder.build(_objects(pods=crashing), f.T0 + 60)
    events = derive_events(forbidden, back, f.T0 + 60)
    assert [(e.kind, e.text) for e in events] == [("read", "pods can be read again")]


def test_unchanged_nodes_are_skipped_by_identity() -> None:
    builder = SnapshotBuilder()
    prev = builder.build(_objects(), f.T0)
    snap = builder.build(_objects(), f.T0 + 30, changed_nodes=[])
    assert all(snap.nodes[n] is prev.nodes[n] for n in NAMES)
    assert derive_events(prev, snap, f.T0 + 30) == []
    # a view that differs but is not a new object is never compared: identity is the test
    fake = replace(prev, nodes={**prev.nodes, "gpu-a": replace(prev.nodes["gpu-a"],
                                                               ready=False)})
    assert [e.text for e in derive_events(prev, fake, f.T0)] == ["NotReady"]
    assert derive_events(fake, replace(fake, generated_at=f.T0 + 1), f.T0) == []


def test_another_cluster_is_a_new_baseline() -> None:
    prev, snap = _pair(_objects(nodes=[f.node("gpu-z")]), changed=["gpu-z"])
    assert derive_events(prev, replace(snap, context="other"), f.T0 + 30) == []


def test_json_round_trip() -> None:
    event = make_event(f.T0, "finding", "gpu-a", "driver-pod-failing: crash",
                       Severity.CRITICAL)
    action = make_event(f.T0 + 1, "action", None, "cordon on gpu-a: ok", who="alice")
    for one in (event, action):
        assert TimelineEvent.from_json(json.loads(json.dumps(one.to_json()))) == one


def test_hostile_json_is_cleaned_or_refused() -> None:
    hostile = {"at": f.T0, "kind": "finding", "node": "gpu\x1b]2;PWNED\x07",
               "text": "\x9b31mred\nsecond line" + "x" * 2000, "severity": "critical",
               "who": "mallory\u202e"}
    event = TimelineEvent.from_json(hostile)
    assert event.node == "gpu\\x1b]2;PWNED\\x07"
    assert event.text.startswith("\\x9b31mred\\nsecond line") and len(event.text) == 500
    assert event.who == "mallory\\u202e"
    bad = [None, [], {"kind": "finding", "text": "x"}, {**hostile, "at": True},
           {**hostile, "at": float("nan")}, {**hostile, "kind": "rm -rf"},
           {**hostile, "severity": "fatal"}, {**hostile, "node": 7}, {**hostile, "text": None}]
    for item in bad:
        with pytest.raises(ValueError):
            TimelineEvent.from_json(item)
    found, skipped = events_from_json([hostile, *bad])
    assert len(found) == 1 and skipped == len(bad)


def test_store_orders_caps_and_filters() -> None:
    store = Timeline(cap=3)
    for at, node in ((10.0, "a"), (30.0, "b"), (20.0, "a"), (40.0, None)):
        store.append(make_event(at, "cordon", node, "cordoned"))
    assert [e.at for e in store.query()] == [40.0, 30.0, 20.0]  # newest first
    assert store.dropped == 1 and len(store) == 3
    assert [e.at for e in store.query(node="a")] == [20.0]
    assert [e.at for e in store.query(since=30.0)] == [40.0, 30.0]
    store.replace([make_event(5.0, "join", "c", "joined the cluster")], since=1.0)
    assert [e.node for e in store.query()] == ["c"] and store.dropped == 0
    assert store.since == 1.0 and store.start == 1.0
    store.append(make_event(0.5, "xid", "c", "XID 79 on GPU 0: seen at its own time"))
    assert store.start == 0.5 and store.since == 1.0  # what is kept begins before watching


def test_actions_from_audit_lines_with_who() -> None:
    """Actions of this cluster (by its server URL and kube-system UID, whatever the context
    is named) become events with who took them; another cluster's behind the same context
    name (3), and a line without a cluster (6, an older gputui's), do not."""
    prod = {"server": "https://prod:6443", "uid": "uid-prod"}
    lines = [
        {"id": "1", "time": "2026-11-29T10:00:00Z", "phase": "intent", "context": "prod-gke",
         "cluster": prod, "user": "alice", "action": "cordon", "targets": ["gpu-a"]},
        {"id": "1", "time": "2026-11-29T10:00:02Z", "phase": "outcome",
         "result": "ok: Cordon gpu-a: done"},
        {"id": "2", "time": "2026-11-29T10:01:00Z", "phase": "intent", "context": "other-name",
         "cluster": prod, "user": "bob\x1b[2J", "action": "drain", "targets": ["gpu-b"]},
        {"id": "3", "time": "2026-11-29T10:02:00Z", "phase": "intent", "context": "prod-gke",
         "cluster": {"server": "https://prod:6443", "uid": "uid-rebuilt"}, "user": "carol",
         "action": "cordon", "targets": ["gpu-a"]},
        {"id": "4", "time": "2026-11-29T10:03:00Z", "phase": "intent", "context": "prod-gke",
         "cluster": prod, "user": "dan", "action": "drain", "targets": ["gpu-a", "gpu-b"]},
        {"id": "4", "time": "2026-11-29T10:04:00Z", "phase": "outcome", "result": "ok: done"},
        {"id": "5", "time": "2026-11-29T10:05:00Z", "phase": "intent", "context": "prod-gke",
         "cluster": prod, "user": "dan", "action": "set-version",
         "targets": ["gpu-a", "cluster-policy"]},
        {"id": "5", "time": "2026-11-29T10:05:01Z", "phase": "outcome", "result": "ok: set"},
        {"id": "6", "time": "2026-11-29T10:06:00Z", "phase": "intent", "context": "prod-gke",
         "user": "erin", "action": "cordon", "targets": ["gpu-b"]},
    ]
    found = dict(action_events(pair_operations(lines), cluster_id("https://prod:6443",
                                                                  "uid-prod"),
                               100.0, {"gpu-a", "gpu-b"}))
    assert set(found) == {"1", "2", "4", "5"}
    assert [(e.node, e.text) for e in found["4"]] == [
        ("gpu-a", "drain (with gpu-b): ok: done"), ("gpu-b", "drain (with gpu-a): ok: done")]
    wide, = found["5"]  # not all of its targets are nodes: one cluster event
    assert (wide.node, wide.text) == (None, "set-version on gpu-a, cluster-policy: ok: set")
    cordon, = found["1"]
    assert (cordon.node, cordon.who, cordon.at) == ("gpu-a", "alice", f.T0 + 2 + 100.0)
    assert cordon.text == "cordon: ok: Cordon gpu-a: done" and cordon.severity is None
    drain, = found["2"]
    assert drain.who == "bob\\x1b[2J" and drain.text.endswith("no outcome recorded")
    assert drain.severity is Severity.WARNING
