"""Operations taken, from the audit log's lines: each intent paired with its outcome.

:mod:`gputui.actions.audit` writes an intent line before the first write and an outcome
line with the same ``id`` after the last. An intent with no outcome is an operation whose
end nobody recorded (gputui was killed mid-drain, the disk filled): the summary says
"no outcome recorded", never "ok". Pure: the lines come decoded (``gputui.actions.
audit_read`` reads the file); every value is checked, because the file is only as
trustworthy as whoever could write to it, and targets are names from the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from gputui.domain.cluster_id import ClusterId, parse_cluster, same_cluster

#: what the summary says of an intent with no outcome line
NO_OUTCOME = "no outcome recorded"


@dataclass(frozen=True, slots=True)
class AuditedOperation:
    """One action as the audit log tells it, by this session or another (an action running
    in this session is a :class:`gputui.actions.operations.Operation`).

    Attributes:
        time: the intent's time as written (RFC 3339, UTC).
        at: the same in epoch seconds, None when it cannot be read.
        result: the outcome's ``result`` (``ok: ...``, ``failed: ...``), None without one.
    """

    id: str
    time: str
    at: float | None
    action: str
    targets: tuple[str, ...]
    user: str
    context: str
    dry_run: str = ""
    result: str | None = None
    error: str = ""
    interrupted: str = ""
    #: the outcome line's time in epoch seconds, None without one (or unreadable)
    ended_at: float | None = None
    #: the cluster the intent line names; None for a line written before gputui
    #: recorded it (or one whose ``cluster`` is not of the right shape)
    cluster: ClusterId | None = None

    @property
    def outcome(self) -> str:
        """The result, the error and an interruption in one phrase."""
        if self.result is None:
            return NO_OUTCOME
        parts = [self.result]
        if self.error and self.error not in self.result:
            parts.append(f"error: {self.error}")
        if self.interrupted:
            parts.append(f"interrupted: {self.interrupted}")
        return "; ".join(parts)


def parse_time(text: str) -> float | None:
    """Epoch seconds of an RFC 3339 time (``2026-12-01T13:53:21.123Z``), None if not one."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    # a time without an offset would be read as this machine's local time: not placed
    return parsed.timestamp() if parsed.tzinfo is not None else None


def _text(entry: Mapping[str, object], key: str) -> str:
    value = entry.get(key)
    return value if isinstance(value, str) else ""


def _targets(entry: Mapping[str, object]) -> tuple[str, ...]:
    value = entry.get("targets")
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def pair_operations(entries: Iterable[Mapping[str, object]],
                    since: float | None = None) -> tuple[AuditedOperation, ...]:
    """Intents (at or after ``since``, oldest first) with their outcomes.

    An outcome whose intent is not among ``entries`` (older than the window, or a line cut
    off) is left out: there is nothing to say what it was the outcome of. An intent whose
    time cannot be read is kept when no window is asked for, dropped otherwise (it cannot be
    placed in the window; fail closed towards "not this session").
    """
    intents: list[Mapping[str, object]] = []
    outcomes: dict[str, Mapping[str, object]] = {}
    for entry in entries:
        audit_id = _text(entry, "id")
        if not audit_id:
            continue
        phase = entry.get("phase")
        if phase == "intent":
            intents.append(entry)
        elif phase == "outcome":
            outcomes[audit_id] = entry
    found = []
    for intent in intents:
        at = parse_time(_text(intent, "time"))
        if since is not None and (at is None or at < since):
            continue
        found.append(_operation(intent, outcomes.get(_text(intent, "id")), at))
    return tuple(found)


def _operation(intent: Mapping[str, object], outcome: Mapping[str, object] | None,
               at: float | None) -> AuditedOperation:
    result = None if outcome is None else (_text(outcome, "result") or "(no result)")
    return AuditedOperation(
        id=_text(intent, "id"), time=_text(intent, "time"), at=at,
        action=_text(intent, "action") or "(unnamed)", targets=_targets(intent),
        user=_text(intent, "user"), context=_text(intent, "context"),
        dry_run=_text(intent, "dry_run"), result=result,
        error=_text(outcome, "error") if outcome is not None else "",
        interrupted=_text(outcome, "interrupted") if outcome is not None else "",
        ended_at=parse_time(_text(outcome, "time")) if outcome is not None else None,
        cluster=parse_cluster(intent.get("cluster")))


@dataclass(frozen=True, slots=True)
class ClusterOperations:
    """The operations of one cluster, and how many of the others were left out.

    Attributes:
        operations: this cluster's, oldest first.
        other_clusters: operations whose line names another cluster.
        without_id: operations whose line names no cluster (written by an older gputui):
            which cluster they were on cannot be told, so they are not this one's.
    """

    operations: tuple[AuditedOperation, ...] = ()
    other_clusters: int = 0
    without_id: int = 0

    def left_out(self) -> list[str]:
        """One phrase per kind of operation left out (none when nothing was)."""
        notes = []
        if self.without_id:
            notes.append(f"{self.without_id} older action{_s(self.without_id)} without a "
                         "cluster id not shown")
        if self.other_clusters:
            notes.append(f"{self.other_clusters} action{_s(self.other_clusters)} on other "
                         "clusters not shown")
        return notes


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def for_cluster(operations: Iterable[AuditedOperation], ours: ClusterId) -> ClusterOperations:
    """Only the operations whose intent line names ``ours`` (see
    :func:`gputui.domain.cluster_id.same_cluster`), however its context was named, by
    time (two gputui sessions appending to one log interleave their lines; an intent whose
    time cannot be read comes last)."""
    kept: list[AuditedOperation] = []
    other = without = 0
    for op in operations:
        if op.cluster is None:
            without += 1
        elif same_cluster(ours, op.cluster):
            kept.append(op)
        else:
            other += 1
    kept.sort(key=lambda op: (op.at is None, op.at or 0.0))
    return ClusterOperations(tuple(kept), other, without)
