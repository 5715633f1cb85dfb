"""The handoff summary with its audit log read: what ``check`` and ``:summary`` print.

The summary itself is pure (:mod:`gputui.domain.summary`); this module adds the one thing
it cannot do, reading the audit log (:mod:`gputui.actions.audit_read`), and chooses which
operations belong: ``check`` runs alone, so it takes the last :data:`CHECK_WINDOW` of the
configured log and names the file; the TUI takes what was done since it started. Both
keep only this cluster's (the snapshot's server URL and ``kube-system`` UID against each
intent line's ``cluster``, :mod:`gputui.domain.cluster_id`) and say how many they left out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from gputui.actions.audit_read import MAX_BYTES, read_audit
from gputui.domain.cluster_id import UID_RESOURCE, cluster_id
from gputui.domain.model import ClusterSnapshot
from gputui.domain.operations import for_cluster, pair_operations, parse_time
from gputui.domain.readgaps import REASON_CODE
from gputui.domain.summary import SummaryInput, build_summary
from gputui.domain.timeline_event import Timeline

#: how far back ``check --format markdown`` looks in the audit log (seconds)
CHECK_WINDOW = 24 * 3600


def check_summary(snapshot: ClusterSnapshot, audit_log: str,
                  wall_now: float | None = None) -> str:
    """The summary ``gputui check --format markdown`` prints: operations of the last 24 h
    from ``audit_log``, which it names."""
    wall = time.time() if wall_now is None else wall_now
    path = Path(audit_log).expanduser()
    scope = f"the audit log {path}, last 24 h"
    return _summary(snapshot, path, wall - CHECK_WINDOW, scope, snapshot.generated_at or wall)


def replay_summary(snapshot: ClusterSnapshot, recording: str, events: Sequence[object],
                   start: float, at: float) -> str:
    """The summary ``check --replay FILE --at TIME --format markdown`` prints: the recorded
    timeline up to ``at`` (its actions carry who took them), and no operations from this
    machine's audit log: the session was recorded elsewhere or earlier, and its actions are
    the timeline's."""
    from gputui.domain.timeline_event import events_from_json

    found, skipped = events_from_json(events)
    timeline = Timeline()
    timeline.replace([event for event in found if event.at <= at], since=start)
    note = "the actions taken are in the timeline below, as recorded"
    if skipped:
        note += f"; {skipped} damaged timeline entries of the recording were skipped"
    return build_summary(SummaryInput(
        snapshot, at, (), f"the recording {Path(recording).name}", note,
        timeline=timeline.events(), timeline_since=timeline.start))


def session_summary(snapshot: ClusterSnapshot, audit_log: str, session_started: float,
                    now: float, timeline: Timeline | None = None) -> str:
    """The summary ``:summary`` shows: operations since the TUI started (wall clock), and
    the app's ``timeline`` (a live one: ``check`` has none)."""
    return _summary(snapshot, Path(audit_log).expanduser(), session_started, "this session",
                    now, timeline if timeline is not None else Timeline())


def _summary(snapshot: ClusterSnapshot, path: Path, since: float, scope: str,
             now: float, timeline: Timeline | None = None) -> str:
    read = read_audit(path)
    mine = for_cluster(pair_operations(read.entries, since=since),
                       cluster_id(snapshot.server, snapshot.cluster_uid))
    operations = mine.operations
    notes = [read.note] if read.note else []
    notes += [*matched_by_url(snapshot), *mine.left_out()]
    if read.cut and not _reaches_back(read.entries, since):
        notes.append(f"only the newest {MAX_BYTES // (1024 * 1024)} MiB of the log were read; "
                     "older operations in this window are left out")
    return build_summary(SummaryInput(
        snapshot, now, operations, scope, "; ".join(notes),
        timeline=timeline.events() if timeline is not None else None,
        timeline_since=timeline.start if timeline is not None else None))


def matched_by_url(snapshot: ClusterSnapshot) -> list[str]:
    """One phrase when this cluster's ``kube-system`` UID is unknown: its actions are then
    told apart by the server URL alone (said, as every fallback is)."""
    if snapshot.cluster_uid:
        return []
    reason = snapshot.unreadable.get(UID_RESOURCE, "")
    code = f" ({REASON_CODE[reason]})" if reason in REASON_CODE else ""
    why = (f"the kube-system namespace could not be read{code}" if reason
           else "this cluster's kube-system namespace UID is not known")
    return [f"{why}: actions are matched to this cluster by its server URL only"]


def _reaches_back(entries: Sequence[Mapping[str, object]], since: float) -> bool:
    """Whether the first line read is older than the window: nothing in it was cut off."""
    first = entries[0].get("time") if entries else None
    at = parse_time(first) if isinstance(first, str) else None
    return at is not None and at < since
