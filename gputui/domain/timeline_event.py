"""One entry of the incident timeline, and the bounded store that keeps them.

Why its own module: the event is what crosses every boundary of the timeline (derived from
snapshots in :mod:`gputui.domain.timeline`, read from the audit log, written to a recording
and read back from one, shown by ``:timeline``, put in the handoff summary), so it has one
JSON form (:meth:`TimelineEvent.to_json`) and one reader (:meth:`TimelineEvent.from_json`)
that trusts nothing: a recording file is hostile input, so every string is cleaned again
and every field checked, and a bad dict raises ``ValueError`` for the caller to skip.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gputui.domain.model import Severity
from gputui.domain.sanitize import clean_line

#: what an event is about: findings raised (or graded again) and cleared, a node's Ready
#: condition, its cordon, its upgrade state, its MIG config and state, an operand pod
#: restarting, an XID, a node joining or leaving, an action taken, a read lost or regained
KINDS = ("finding", "cleared", "ready", "cordon", "upgrade", "mig", "restart", "xid",
         "join", "leave", "action", "read")
#: the longest text kept (a hostile recording cannot make one event a megabyte)
MAX_TEXT = 500
#: the longest node or user name kept
MAX_NAME = 253
#: how many events the store keeps (the oldest go first, and the view says how many went)
MAX_EVENTS = 20_000


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """Something that changed, when (epoch seconds on the source's clock) and where.

    Attributes:
        at: when it happened (an XID at its own time) or was first seen.
        kind: one of :data:`KINDS`.
        node: the node it concerns, None for the cluster.
        text: one line, sanitised, saying what changed (``NotReady``, ``upgrade: ...``).
        severity: how bad, where it has one (a finding raised, NotReady, an XID).
        who: the user an action was taken by (the audit log's ``user``), "" otherwise.
    """

    at: float
    kind: str
    node: str | None
    text: str
    severity: Severity | None = None
    who: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``at``, ``kind``, ``node``, ``text``, ``severity``, ``who``)."""
        return {"at": self.at, "kind": self.kind, "node": self.node, "text": self.text,
                "severity": self.severity.value if self.severity is not None else None,
                "who": self.who}

    @classmethod
    def from_json(cls, data: object) -> TimelineEvent:
        """The event ``data`` holds (as :meth:`to_json` writes it), strings cleaned again.

        Raises:
            ValueError: ``data`` is not such a dict (one line saying which field is bad).
        """
        if not isinstance(data, Mapping):
            raise ValueError("a timeline event is not an object")  # noqa: TRY004 - the contract
        at = data.get("at")
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
            raise ValueError("a timeline event has no valid time")
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError("a timeline event has an unknown kind")
        node, text, who = data.get("node"), data.get("text"), data.get("who", "")
        if node is not None and not isinstance(node, str):
            raise ValueError("a timeline event's node is not text")
        if not isinstance(text, str) or not isinstance(who, str):
            raise ValueError("a timeline event's text or user is not text")  # noqa: TRY004
        severity = data.get("severity")
        if severity is not None and severity not in {s.value for s in Severity}:
            raise ValueError("a timeline event has an unknown severity")
        return make_event(float(at), str(kind), node, text,
                          Severity(severity) if severity is not None else None, who)


def make_event(at: float, kind: str, node: str | None, text: str,
               severity: Severity | None = None, who: str = "") -> TimelineEvent:
    """An event with every string made one safe line of bounded length."""
    return TimelineEvent(at, kind, clean_line(node)[:MAX_NAME] if node is not None else None,
                         clean_line(text)[:MAX_TEXT], severity, clean_line(who)[:MAX_NAME])


def _at(event: TimelineEvent) -> float:
    return event.at


class Timeline:
    """The events seen, oldest first, at most ``cap`` of them; not thread-safe (the UI
    thread owns it).

    ``since`` is when watching began (the first full read, or the start of what a replay
    was given), ``dropped`` how many of the oldest events went over the cap.
    """

    def __init__(self, cap: int = MAX_EVENTS) -> None:
        self.cap = cap
        self.since: float | None = None
        self.dropped = 0
        #: counts every change, so a view redraws only when there is something new
        self.version = 0
        self._events: list[TimelineEvent] = []

    @property
    def start(self) -> float | None:
        """Where what is kept begins: when watching began, or the oldest event when that
        is older (an XID seen at its own time, the audit log's last hour)."""
        first = self._events[0].at if self._events else None
        if self.since is None or first is None:
            return self.since if first is None else first
        return min(self.since, first)

    def __len__(self) -> int:
        return len(self._events)

    def append(self, event: TimelineEvent) -> None:
        """Keep ``event`` in time order (an XID may be older than what was seen before)."""
        self.version += 1
        if self._events and event.at < self._events[-1].at:
            bisect.insort_right(self._events, event, key=_at)
        else:
            self._events.append(event)
        if len(self._events) > self.cap:
            over = len(self._events) - self.cap
            del self._events[:over]
            self.dropped += over

    def extend(self, events: Iterable[TimelineEvent]) -> None:
        for event in events:
            self.append(event)

    def replace(self, events: Iterable[TimelineEvent], since: float | None = None) -> None:
        """Hold exactly ``events`` (a replay's timeline up to its cursor)."""
        self._events, self.dropped = [], 0
        self.since = since
        self.version += 1
        self.extend(events)

    def clear(self, since: float | None) -> None:
        """Forget everything; watching starts again at ``since`` (a context switch)."""
        self.replace((), since)

    def query(self, node: str | None = None, since: float | None = None,
              limit: int | None = None) -> list[TimelineEvent]:
        """Events newest first, only ``node``'s when given, only from ``since`` on."""
        start = 0 if since is None else bisect.bisect_left(self._events, since, key=_at)
        found: list[TimelineEvent] = []
        for event in reversed(self._events[start:]):
            if node is None or event.node == node:
                found.append(event)
                if limit is not None and len(found) >= limit:
                    break
        return found

    def events(self) -> tuple[TimelineEvent, ...]:
        """Every event kept, oldest first."""
        return tuple(self._events)


def events_from_json(items: Sequence[object]) -> tuple[list[TimelineEvent], int]:
    """(the events read, how many items were skipped as bad)."""
    found, skipped = [], 0
    for item in items:
        try:
            found.append(TimelineEvent.from_json(item))
        except ValueError:  # a bad entry of a hostile file: skipped and counted
            skipped += 1
    return found, skipped
