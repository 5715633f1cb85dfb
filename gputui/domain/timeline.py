"""The incident timeline: what changed between two snapshots, and the actions taken.

In an incident the question after "what is wrong" is "what changed, and when". gputui sees
every snapshot go by, so :func:`derive_events` compares each one with the one before and
says what changed: findings raised, graded again and cleared (a finding is the same one by
its code and subject on its node), a node's Ready condition, its cordon, its driver upgrade
state, its MIG config and state, an operand pod restarting or replaced, a new XID (placed at
its own time), nodes joining and leaving, and a resource that could no longer be read (or
could again). :func:`action_events` turns the audit log's operations into events with who
took them.

What is *not* an event, on purpose:

* the first snapshot (``prev`` None): it is the baseline, not a burst of "raised";
* anything while data is loading (``snapshot.loading``): a list half read is not a change;
* a finding that vanished because what it is read from became unreadable (a 403 on pods,
  metrics refused): unknown is not "cleared", and a finding seen again once the read is
  back was not "raised". The lost read itself is one event.

Cost: the builder reuses the ``NodeView`` object of a node that did not change, so a node is
compared only when its view is a new object (``is``); at 5,000 nodes with a handful
changing, a call looks at a handful of nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from gputui.domain import labels as L
from gputui.domain.catalogue import XID_ERROR
from gputui.domain.cluster_id import ClusterId, same_cluster
from gputui.domain.model import ClusterSnapshot, Finding, NodeView, Severity
from gputui.domain.operations import AuditedOperation
from gputui.domain.pane import Pane
from gputui.domain.readgaps import METRICS, REASON_CODE
from gputui.domain.timeline_event import (
    KINDS,
    MAX_EVENTS,
    Timeline,
    TimelineEvent,
    events_from_json,
    make_event,
)
from gputui.domain.upgrade_state import UpgradeState
from gputui.domain.xid import xid_info, xid_meaning

__all__ = ["KINDS", "MAX_EVENTS", "Timeline", "TimelineEvent", "action_events",
           "derive_events", "events_from_json", "make_event"]

#: upgrade and MIG states that are a failure
_FAILED_STATES = frozenset({UpgradeState.FAILED, L.MIG_STATE_FAILED})
#: the most targets an action is told on, one event each (more: one cluster event)
MAX_ACTION_NODES = 20

_Key = tuple[str, str]


def derive_events(prev: ClusterSnapshot | None, snap: ClusterSnapshot,
                  now: float) -> list[TimelineEvent]:
    """What changed from ``prev`` to ``snap``, seen at ``now``, oldest first.

    ``prev`` None (the first snapshot), either snapshot loading, or two different clusters
    (a context switch) give nothing: there is no earlier state to compare with.
    """
    if prev is None or snap.loading or prev.loading or prev.context != snap.context:
        return []
    gained = snap.unreadable.keys() - prev.unreadable.keys()
    lost = prev.unreadable.keys() - snap.unreadable.keys()
    events = _read_events(snap, gained, lost, now)
    moved = gained | lost
    known = _Known(metrics=METRICS not in moved, other=not (moved - {METRICS}))
    if known.other:
        events += _finding_events(None, _cluster_findings(prev), _cluster_findings(snap),
                                  now, known)
    if "nodes" not in snap.unreadable and "nodes" not in prev.unreadable:
        events += _node_events(prev.nodes, snap.nodes, now, known)
    events.sort(key=lambda e: e.at)
    return events


class _Known:
    """Which findings' absence means "cleared" in this step (their source stayed read)."""

    __slots__ = ("metrics", "other")

    def __init__(self, metrics: bool, other: bool) -> None:
        self.metrics, self.other = metrics, other

    def finding(self, finding: Finding) -> bool:
        return self.metrics if finding.pane == Pane.METRICS else self.other


def _read_events(snap: ClusterSnapshot, gained: Collection[str], lost: Collection[str],
                 now: float) -> list[TimelineEvent]:
    events = []
    for resource in sorted(gained):
        code = REASON_CODE.get(snap.unreadable[resource])
        why = f" ({code})" if code else ""
        events.append(make_event(now, "read", None, f"cannot read {resource}{why} any more: "
                                 "what it feeds is unknown", Severity.WARNING))
    events += [make_event(now, "read", None, f"{resource} can be read again")
               for resource in sorted(lost)]
    return events


def _cluster_findings(snap: ClusterSnapshot) -> tuple[Finding, ...]:
    return tuple(f for f in snap.findings if f.node is None)


def _node_events(before: Mapping[str, NodeView], after: Mapping[str, NodeView], now: float,
                 known: _Known) -> list[TimelineEvent]:
    events: list[TimelineEvent] = []
    get = before.get
    for name, view in after.items():
        old = get(name)
        if old is view:
            continue  # the builder reused it: nothing changed
        if old is None:
            events.append(make_event(now, "join", name, "joined the cluster"))
            if not view.loading:
                events += _finding_events(name, (), view.findings, now, known)
            continue
        events += _changes(old, view, now, known)
    if before.keys() != after.keys():
        events += [make_event(now, "leave", name, "left the cluster")
                   for name in sorted(before.keys() - after.keys())]
    return events


def _changes(old: NodeView, new: NodeView, now: float, known: _Known) -> list[TimelineEvent]:
    """One node's changes (its view is a new object)."""
    name = new.name
    events = []
    if old.ready != new.ready:
        events.append(make_event(now, "ready", name, "Ready" if new.ready else "NotReady",
                                 None if new.ready else Severity.WARNING))
    if old.cordoned != new.cordoned:
        events.append(make_event(now, "cordon", name,
                                 "cordoned" if new.cordoned else "uncordoned"))
    if old.upgrade_state != new.upgrade_state:
        events.append(_state("upgrade", name, "upgrade", old.upgrade_state,
                             new.upgrade_state, now))
    if old.mig_config != new.mig_config:
        events.append(make_event(now, "mig", name, f"MIG config {old.mig_config or 'none'} "
                                 f"→ {new.mig_config or 'none'}"))
    if old.mig_state != new.mig_state:
        events.append(_state("mig", name, "MIG state", old.mig_state, new.mig_state, now))
    pods_known = not (old.loading or new.loading or old.unknown or new.unknown)
    if pods_known:
        events += _restarts(old, new, now)
    events += _xids(old, new, now)
    # findings are compared only while what they are read from stays the same
    if not (old.loading or new.loading) and old.unknown == new.unknown:
        events += _finding_events(name, old.findings, new.findings, now, known)
    return events


def _state(kind: str, node: str, what: str, old: str | None, new: str | None,
           now: float) -> TimelineEvent:
    severity = Severity.WARNING if new in _FAILED_STATES else None
    return make_event(now, kind, node, f"{what} {old or 'none'} → {new or 'none'}", severity)


def _restarts(old: NodeView, new: NodeView, now: float) -> list[TimelineEvent]:
    """Operand pods restarted (restart count up) or replaced (another pod name)."""
    events = []
    before = {stage.operand: stage for stage in old.pipeline.stages}
    for stage in new.pipeline.stages:
        was = before.get(stage.operand)
        if was is None or not was.pod or not stage.pod:
            continue
        if was.pod != stage.pod:
            events.append(make_event(now, "restart", new.name, f"{stage.operand} pod replaced "
                                     f"({was.pod} → {stage.pod})"))
        elif stage.restarts > was.restarts:
            count = stage.restarts - was.restarts
            detail = f": {stage.reason}" if stage.reason else ""
            events.append(make_event(
                now, "restart", new.name, f"{stage.operand} restarted "
                f"({count} more, {stage.restarts} in all){detail}",
                Severity.WARNING if stage.reason.endswith("CrashLoopBackOff") else None))
    return events


def _xids(old: NodeView, new: NodeView, now: float) -> list[TimelineEvent]:
    """XIDs not there before, at their own time when known (an XID already there at the
    first read, of unknown time, is not new)."""
    if old.xids == new.xids:
        return []
    seen = {(x.gpu, x.xid, x.when) for x in old.xids}
    events = []
    for xid in new.xids:
        if (xid.gpu, xid.xid, xid.when) in seen or xid.when <= 0 or xid.before:
            continue
        text = f"XID {xid.xid} on GPU {xid.gpu}: {xid_meaning(xid.xid, xid.message)}"
        events.append(make_event(min(xid.when, now), "xid", new.name, text,
                                 xid_info(xid.xid, xid.message).severity))
    return events


def _finding_key(finding: Finding) -> _Key:
    return finding.code, finding.subject


def _finding_events(node: str | None, old: Sequence[Finding], new: Sequence[Finding],
                    now: float, known: _Known) -> list[TimelineEvent]:
    """Raised, graded again and cleared, by code and subject."""
    if old == new:
        return []
    before = {_finding_key(f): f for f in old}
    after = {_finding_key(f): f for f in new}
    events = []
    for key, finding in after.items():
        was = before.get(key)
        if not known.finding(finding):
            continue
        if was is None:
            if finding.code != XID_ERROR:  # the XID itself is the event, at its own time
                events.append(make_event(now, "finding", node, f"{finding.code}: "
                                         f"{finding.message}", finding.severity))
        elif was.severity is not finding.severity:
            events.append(make_event(now, "finding", node, f"{finding.code} now "
                                     f"{finding.severity.value}: {finding.message}",
                                     finding.severity))
    for key, finding in before.items():
        if key not in after and known.finding(finding):
            events.append(make_event(now, "cleared", node, f"{finding.code} cleared "
                                     f"(was: {finding.message})"))
    return events


def action_events(operations: Iterable[AuditedOperation], cluster: ClusterId, shift: float,
                  nodes: Collection[str]) -> list[tuple[str, list[TimelineEvent]]]:
    """(audit id, its events) for each operation on ``cluster``, however its context was
    named (an intent line without a cluster is no cluster's: see
    :mod:`gputui.domain.cluster_id`).

    Each is placed when it ended (its outcome line's time; its start when it has none),
    moved by ``shift`` seconds from the audit log's wall clock onto the source's clock. An
    operation on a few nodes is one event per node, so a node's timeline shows it; on more
    (or on no node), one cluster event naming how many.
    """
    found = []
    for op in operations:
        when = op.ended_at if op.ended_at is not None else op.at
        if op.cluster is None or not same_cluster(cluster, op.cluster) or when is None:
            continue
        targets = list(op.targets)
        where = ", ".join(targets[:3]) + (f" and {len(targets) - 3} more"
                                          if len(targets) > 3 else "")
        failed = op.result is None or not op.result.startswith("ok")
        text = f"{op.action} on {where or 'the cluster'}: {op.outcome}"
        severity = Severity.WARNING if failed else None
        on_nodes = [t for t in targets if t in nodes]
        if on_nodes and len(targets) <= MAX_ACTION_NODES and len(on_nodes) == len(targets):
            events = [make_event(when + shift, "action", t, _on_node(op, t), severity, op.user)
                      for t in on_nodes]
        else:
            events = [make_event(when + shift, "action", None, text, severity, op.user)]
        found.append((op.id, events))
    return found


def _on_node(op: AuditedOperation, node: str) -> str:
    """``cordon: ok: ...`` on one node's row (the node column names it), with the other
    targets named when there are any."""
    others = [t for t in op.targets if t != node]
    more = f" and {len(others) - 3} more" if len(others) > 3 else ""
    also = f" (with {', '.join(others[:3])}{more})" if others else ""
    return f"{op.action}{also}: {op.outcome}"
