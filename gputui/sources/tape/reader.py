"""Reading a recording back: the cluster's input as it was at any recorded moment.

The file is read once, whole (:meth:`TapeReader.open`): every frame is parsed, sanitised and
checked, and each delta is resolved into the objects it leaves (a merge patch applied once,
a pod read into :class:`~gputui.domain.pods.PodInfo` once), so seeking never parses or
patches again. A checkpoint (shallow copies of the keyed collections, sharing the objects)
is kept at each keyframe and every :data:`CHECKPOINT_OPS` changes; :meth:`objects_at` copies
the nearest one before the time and replays at most that many dict assignments after it.

A truncated tail (a ``kill -9``, a copy cut short) is fine: the partial last line, and a
build whose last part is missing, are ignored. Anything else that does not read as a
recording raises :class:`TapeError` with one line.
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from gputui import gctuning
from gputui.domain.inputs import ClusterObjects
from gputui.domain.merge_patch import merge_patch
from gputui.domain.metrics import MetricsReading, MetricsWant
from gputui.domain.pods import read_pod
from gputui.domain.sanitize import clean_line, clean_tree
from gputui.domain.thresholds import DomainThresholds, thresholds_from_json
from gputui.sources.decode import reduce_node
from gputui.sources.reduce import reduce_configmap, reduce_plain
from gputui.sources.tape.cost import ChangeCost
from gputui.sources.tape.format import (
    CLUSTER,
    COLLECTIONS,
    DELETE,
    DELTA,
    FORMAT,
    KEYFRAME,
    MAGIC,
    METRICS,
    PATCH,
    SET,
    SMALL_FIELDS,
    TIMELINE,
    TapeError,
    cluster_uid_of,
    holds_huge_int,
    may_hold_huge_int,
    tape_lines,
)
from gputui.sources.tape.metrics import MetricsHistory
from gputui.sources.tape.objects import objects_from_json

#: changes between two checkpoints: the most objects_at replays after copying one
CHECKPOINT_OPS = 20_000
#: objects frames between two checkpoints, at the most
CHECKPOINT_FRAMES = 400

Change = tuple[str, Any, Any]  # collection, key, object (None: removed)
State = dict[str, dict[Any, Any]]


class _Damaged(Exception):
    """A frame that does not have the shape it must (said as the reader's TapeError)."""


@dataclass(frozen=True, slots=True)
class _ObjectsFrame:
    at: float
    keyframe: bool
    changes: tuple[Change, ...]
    small: ClusterObjects  # the small fields after this frame (shared while unchanged)


class TapeReader:
    """A recording, loaded; see the module docstring. Build with :meth:`open`."""

    def __init__(self, path: Path, head: Mapping[str, Any]) -> None:
        self.path = path
        self.context = str(head.get("context") or "")
        self.server = str(head.get("server") or "")
        self.recorded_at = _number(head.get("recorded_at"), "recorded_at")
        self.version = str(head.get("version") or "")
        #: the finding thresholds the session ran with (None: not recorded, older file)
        self.recorded_thresholds: Mapping[str, Any] | None = (
            head["thresholds"] if isinstance(head.get("thresholds"), dict) else None)
        self.start = 0.0
        self.end = 0.0
        self._frames: list[_ObjectsFrame] = []
        self._times: list[float] = []
        self._changed: list[float] = []  # frames that changed something (not idle ones)
        self._checkpoints: list[int] = []  # frame indices, ascending
        self._saved: dict[int, State] = {}
        self._events: list[dict[str, Any]] = []
        self._event_times: list[float] = []
        self._metrics = MetricsHistory()
        self._metric_times: list[float] = []
        # the open pass only
        self._json: State = {name: {} for name in COLLECTIONS}
        self._state: State = {name: {} for name in COLLECTIONS}
        self._small_json: dict[str, Any] = {}
        self._small = ClusterObjects()
        self._cluster_uid = ""  # from the last cluster frame (none: an older recording)
        self._parts: list[Mapping[str, Any]] = []
        self._since_checkpoint = 0
        self._cost = ChangeCost()

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: Path) -> TapeReader:
        """Read ``path`` whole; TapeError (one line) when it is not a readable recording."""
        path = Path(path)
        try:
            # millions of acyclic, long-lived objects: no cyclic collection while they are
            # made (it measured half the open time), and frozen after (gctuning's rule)
            with path.open("rb") as file, gctuning.paused(freeze_after=True):
                lines = tape_lines(file.read, path, os.fstat(file.fileno()).st_size)
                first = next(lines, None)
                if first is None:
                    raise TapeError(f"not a gputui recording: {path} (empty)")
                reader = cls(path, _header(first, path))
                for number, line in enumerate(lines, start=2):
                    reader._line(line, number)
        except TapeError:
            raise  # already one line (a SourceError is an OSError: not wrapped twice)
        except OSError as error:
            raise TapeError(f"cannot read recording {path}: "
                            f"{error.strerror or error}") from None
        reader._finish()
        return reader

    def _line(self, line: bytes, number: int) -> None:
        try:
            frame = msgspec.json.decode(line)  # 1.4 times json's speed; errors are ValueErrors
            if _may_need_cleaning(line):
                frame = _clean(frame)
            if may_hold_huge_int(line) and holds_huge_int(frame):
                raise _Damaged("a number out of range")
            if not isinstance(frame, dict) or not isinstance(frame.get("k"), str):
                raise _Damaged("not a frame")
            at = _number(frame.get("t"), "t")
            kind = frame["k"]
            if kind in (KEYFRAME, DELTA):
                self._objects_part(frame, at)
            elif kind == METRICS:
                self._metrics.add(frame)
                self._metric_times.append(at)
            elif kind == TIMELINE:
                self._timeline(frame)
            elif kind == CLUSTER:  # which cluster the frames after it are of
                self._cluster_uid = cluster_uid_of(frame)
        except (_Damaged, ValueError, TypeError, KeyError, AttributeError,
                OverflowError) as error:
            raise TapeError(f"recording {self.path} is damaged (line {number}: "
                            f"{str(error)[:120] or type(error).__name__})") from None
        except RecursionError:  # msgspec's or a walk's: nesting no object gputui wrote has
            raise TapeError(f"recording {self.path} is damaged (line {number}: nested too "
                            "deep)") from None

    def _timeline(self, frame: Mapping[str, Any]) -> None:
        """Timeline events are the timeline's to read: here only "a dict with a time"."""
        events = frame.get("events")
        if not isinstance(events, list):
            raise _Damaged("timeline frame without events")
        for event in events:
            if isinstance(event, dict) and isinstance(event.get("at"), int | float):
                self._events.append(event)

    def _objects_part(self, frame: Mapping[str, Any], at: float) -> None:
        self._parts.append(frame)
        if frame.get("end"):
            parts, self._parts = self._parts, []
            self._apply(parts, at, parts[0]["k"] == KEYFRAME)

    def _apply(self, parts: Sequence[Mapping[str, Any]], at: float, keyframe: bool) -> None:
        """Resolve one build's ops into the objects it leaves, and keep it as a frame."""
        carried: State = {name: {} for name in COLLECTIONS}
        previous, small_before = self._state, self._small_json
        if keyframe:  # starts from nothing, but what it repeats keeps its identity
            carried = dict(zip(self._json, self._carry(), strict=True))
            self._json = {name: {} for name in COLLECTIONS}
            self._state = {name: {} for name in COLLECTIONS}
            self._small_json = {}
        elif not self._frames:
            raise _Damaged("a delta before any keyframe")
        changes: list[Change] = []
        olds: list[Any] = []
        for part in parts:
            ops = part.get("ops")
            if not isinstance(ops, list):
                raise _Damaged("objects frame without ops")
            for op in ops:
                change, old = self._op(op, carried)
                changes.append(change)
                olds.append(previous[change[0]].get(change[1]) if keyframe else old)
        whole = parts[-1].get("whole") or {}
        if not isinstance(whole, dict) or any(f not in SMALL_FIELDS for f in whole):
            raise _Damaged("unknown cluster-wide field")
        for field in ("cluster_policies", "nvidia_drivers", "events"):
            if field in whole and not all(isinstance(i, dict) for i in whole[field] or ()):
                raise _Damaged(f"{field} holds something other than objects")
        if whole or keyframe:
            self._small_json.update(whole)
            self._small = objects_from_json(self._small_json)
        fields = {f for f in small_before.keys() | self._small_json.keys()
                  if small_before.get(f) != self._small_json.get(f)}  # a keyframe repeats
        self._cost.add(changes, olds, fields, previous if keyframe else None, self._state)
        if self._small.cluster_uid != self._cluster_uid:
            self._small = replace(self._small, cluster_uid=self._cluster_uid)
        self._frames.append(_ObjectsFrame(at, keyframe, tuple(changes), self._small))
        self._times.append(at)
        if changes or whole or keyframe:
            self._changed.append(at)
        self._since_checkpoint += len(changes)
        if (keyframe or self._since_checkpoint >= CHECKPOINT_OPS
                or len(self._frames) - 1 - self._last_checkpoint() >= CHECKPOINT_FRAMES):
            self._checkpoint()

    def _carry(self) -> list[dict[Any, tuple[Any, Any]]]:
        """Per collection, key -> (document, object) of the state a keyframe replaces."""
        return [{key: (documents[key], self._state[name][key]) for key in documents}
                for name, documents in self._json.items()]

    def _op(self, op: Any, carried: State) -> tuple[Change, Any]:
        """One op resolved into the object it leaves, and the object it replaced. An object
        a keyframe repeats unchanged is the one already read (no second ``read_pod``), so a
        snapshot builder that knows objects by identity sees no change across a keyframe."""
        if not isinstance(op, list) or len(op) != 4 or op[0] not in COLLECTIONS:
            raise _Damaged("bad op")
        name, kind, raw_key, value = op
        key = _read_key(raw_key, COLLECTIONS[name])
        documents, state = self._json[name], self._state[name]
        same = carried[name].get(key)
        old = state.get(key)
        if kind == SET and same is not None and same[0] == value:
            documents[key], state[key] = same
            return (name, key, state[key]), old
        if kind == DELETE:
            documents.pop(key, None)
            state.pop(key, None)
            return (name, key, None), old
        if kind == PATCH:
            if key not in documents:
                raise _Damaged(f"a patch of {name} {key!r} never recorded")
            value = merge_patch(documents[key], value)
        elif kind != SET:
            raise _Damaged(f"unknown op {kind!r}")
        if not isinstance(value, dict):
            raise _Damaged(f"{name} {key!r} is not an object")
        documents[key] = value
        state[key] = _object(name, value)
        return (name, key, state[key]), old

    def _last_checkpoint(self) -> int:
        return self._checkpoints[-1] if self._checkpoints else -1

    def _checkpoint(self) -> None:
        index = len(self._frames) - 1
        self._checkpoints.append(index)
        self._saved[index] = {name: dict(items) for name, items in self._state.items()}
        self._since_checkpoint = 0

    def _finish(self) -> None:
        """Drop what only the open pass needed and settle start/end (TapeError if empty)."""
        self._json, self._parts = {}, []
        self._events.sort(key=lambda e: float(e["at"]))
        self._event_times = [float(e["at"]) for e in self._events]
        times = self._times + self._metric_times + self._event_times
        if not self._frames:
            raise TapeError(f"recording {self.path} holds no cluster state (it ended before "
                            "the first snapshot)")
        self.start, self.end = min(times), max(times)

    # ------------------------------------------------------------ reading
    def change_times(self) -> Sequence[float]:
        """Sorted distinct times at which objects, metrics or timeline changed."""
        return sorted(set(self._changed) | set(self._metric_times) | set(self._event_times))

    def first_complete(self, after: float | None = None) -> float | None:
        """The first recorded moment (after ``after`` when given) at which the session had
        read every list it needs (no feed still ``loading``), None if it never had: where a
        replay opens, and what ``check --replay`` names for a moment too early."""
        for at, frame in zip(self._times, self._frames, strict=True):
            if (after is None or at > after) and not frame.small.loading:
                return at
        return None

    def thresholds(self, ours: DomainThresholds) -> DomainThresholds:
        """The thresholds to judge this recording by: the session's where it recorded them,
        ``ours`` for the rest (and for a file that recorded none)."""
        return thresholds_from_json(self.recorded_thresholds, ours)

    def rebuild_cost(self, first: float, second: float) -> int:
        """What moving a warm builder from ``first`` to ``second`` costs (an estimate for
        choosing among builders; see :mod:`gputui.sources.tape.cost`)."""
        return self._cost.between(self._frame_at(first), self._frame_at(second))

    def change_quantile(self, share: float) -> float:
        """The time by which ``share`` (0 to 1) of the recording's changes had happened
        (where to park warm builders so that each covers as many changes)."""
        return self._times[self._cost.frame_at_share(share)]

    def _frame_at(self, at: float) -> int:
        return max(0, bisect_right(self._times, at) - 1)

    def objects_at(self, at: float) -> ClusterObjects:
        """The cluster's input as of the last build at or before ``at`` (the first build
        when ``at`` is before it). Fresh mappings each call (the caller may keep them);
        the objects in them are shared with the reader and must not be changed, as the
        domain never changes its input."""
        index = self._frame_at(at)
        base = self._checkpoints[bisect_right(self._checkpoints, index) - 1]
        state = {name: dict(items) for name, items in self._saved[base].items()}
        for frame in self._frames[base + 1:index + 1]:
            for name, key, value in frame.changes:
                if value is None:
                    state[name].pop(key, None)
                else:
                    state[name][key] = value
        return replace(self._frames[index].small, nodes=state["nodes"], pods=state["pods"],
                       daemonsets=state["daemonsets"], configmaps=state["configmaps"],
                       label_times=state["label_times"])

    def timeline_until(self, at: float) -> list[dict[str, Any]]:
        """Recorded timeline events with ``at`` <= ``at``, oldest first (copies)."""
        return [dict(e) for e in self._events[:bisect_right(self._event_times, at)]]

    def metrics_at(self, at: float, want: MetricsWant) -> MetricsReading | None:
        """The newest reading at or before ``at``; its selected node's part from the newest
        reading of ``want.selected`` at or before ``at`` (no node part when there is none).
        None when no reading was recorded by then."""
        index = bisect_right(self._metric_times, at) - 1
        if index < 0:
            return None
        frames = self._metrics.frames
        node_frame = None
        if want.selected:
            node_frame = next((frames[i] for i in range(index, -1, -1)
                               if frames[i].node == want.selected), None)
        return self._metrics.reading(frames[index], node_frame)


#: what a line must hold for a string in it to be unsafe: an escape that decodes to a
#: control or a line break (raw ones are refused by the JSON parser inside strings), DEL
_UNSAFE_MARK = re.compile(rb"\\[untrbf]|\x7f")


def _may_need_cleaning(line: bytes) -> bool:
    """False when no string in the line can hold an unsafe character: told by scanning its
    bytes in C, so the sanitiser walks only the rare line that may (a recording is almost
    all clean, and walking an hour of a big cluster took seconds)."""
    if (b"\\" in line or b"\x7f" in line) and _UNSAFE_MARK.search(line):
        return True  # (two memchr scans first: the pattern is slower, and rarely needed)
    return not (line.isascii() or line.decode("utf-8", "replace").isprintable())


def _clean(frame: Any) -> Any:
    """``frame`` with every string sanitised. A metrics frame's trace points are numbers
    (``float()`` reads them, a string there is damage) and the bulk of it: they are not
    walked."""
    if not isinstance(frame, dict) or frame.get("k") != METRICS:
        return clean_tree(frame)
    node = frame.get("node")
    if not isinstance(node, dict) or not isinstance(node.get("gpus"), list):
        return clean_tree(frame)
    traces = [g.pop("traces", None) if isinstance(g, dict) else None for g in node["gpus"]]
    cleaned = clean_tree(frame)
    for gpu, trace in zip(cleaned["node"]["gpus"], traces, strict=True):
        if isinstance(gpu, dict) and trace is not None:
            gpu["traces"] = {clean_line(str(k)): v for k, v in trace.items()} \
                if isinstance(trace, dict) else trace
    return cleaned


def _object(name: str, value: dict[str, Any]) -> Any:
    """What ClusterObjects holds, cut to the shapes the live cache keeps (the same
    reducers: a recorded object of a shape the cluster never sends cannot reach the domain,
    and one that was recorded from the cache comes back equal): a read pod, label times as
    numbers."""
    if name == "pods":
        return read_pod(value)
    if name == "label_times":
        return {str(label): _number(when, "label time") for label, when in value.items()}
    if name == "nodes":
        return reduce_node(value)[0]
    return (reduce_configmap if name == "configmaps" else reduce_plain)(value)[0]


def _read_key(raw: Any, pair: bool) -> Any:
    if pair:
        if (isinstance(raw, list) and len(raw) == 2
                and all(isinstance(part, str) for part in raw)):
            return raw[0], raw[1]
    elif isinstance(raw, str):
        return raw
    raise _Damaged("bad key")


def _number(value: Any, what: str) -> float:
    """``value`` as a finite float; _Damaged otherwise (an int like 10**400 included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Damaged(f"{what} is not a number")
    try:
        number = float(value)
    except OverflowError:
        raise _Damaged(f"{what} is out of range") from None
    if not math.isfinite(number):
        raise _Damaged(f"{what} is out of range")
    return number


def _header(line: bytes, path: Path) -> Mapping[str, Any]:
    try:
        head = msgspec.json.decode(line)
    except (ValueError, RecursionError):
        head = None
    if not isinstance(head, dict) or not isinstance(head.get(MAGIC), int):
        raise TapeError(f"not a gputui recording: {path}")
    if head[MAGIC] > FORMAT:
        raise TapeError(f"recording {path} was written by a newer gputui (format "
                        f"{head[MAGIC]}; this one reads format {FORMAT})")
    try:
        _number(head.get("recorded_at"), "recorded_at")
    except _Damaged:
        raise TapeError(f"not a gputui recording: {path} (no recording time)") from None
    cleaned: Mapping[str, Any] = clean_tree(head)
    return cleaned
