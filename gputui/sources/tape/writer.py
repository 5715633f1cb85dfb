"""Writing a recording (``gputui --record``): the session's inputs as they arrive.

Callers (the source's build thread, the metrics feed's thread, the app) only hand things
over: :meth:`TapeWriter.objects` takes a shallow copy of the cache's live mappings (the
cache replaces objects, never changes them in place, so the copy's values stay valid) and
returns; the writer's own thread diffs, encodes, compresses and writes. A caller never waits
for the disk. When the writer falls behind, only the newest build waits to be written: a
delta is taken against what was last *written*, so a skipped build loses a moment, never
a change.

Every second with something new, the writer ends a deflate block with ``Z_SYNC_FLUSH`` and
writes it: a ``kill -9`` loses at most the last second, and a reader (or ``zcat``) decodes
everything before the cut. Diffing is by identity first (the cache hands the same object
while it is unchanged), then by content (a merge patch, see :mod:`gputui.sources.tape.format`);
a node change that is only the kubelet's heartbeat is not written (:func:`heartbeat_only`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from itertools import compress
from operator import is_not
from pathlib import Path
from typing import Any

from gputui import __version__, gctuning
from gputui.domain.inputs import ClusterObjects
from gputui.domain.merge_patch import merge_diff
from gputui.domain.metrics import MetricsReading
from gputui.domain.pods import PodInfo, pod_to_dict
from gputui.privatefile import PrivateFileError, open_private, write_all
from gputui.sources.reduce import heartbeat_only
from gputui.sources.tape.format import (
    COLLECTIONS,
    DELETE,
    DELTA,
    KEYFRAME,
    PATCH,
    SET,
    SMALL_FIELDS,
    TIMELINE,
    TapeError,
    cluster_frame,
    encode_line,
    header,
)
from gputui.sources.tape.metrics import MetricsEncoder
from gputui.sources.tape.objects import objects_to_json

log = logging.getLogger(__name__)

#: seconds between flushes (what a kill -9 may lose)
FLUSH_EVERY = 1.0
#: objects per line: one line is one C call holding the GIL (encode here, parse in replay)
PART_OPS = 200
#: source seconds between keyframes, at the least (see :meth:`TapeWriter._keyframe_due`)
KEYFRAME_EVERY = 900.0
#: source seconds after which a build that changed nothing is still written (an empty
#: frame): the recording then says until when the state held, and where it ends
IDLE_FRAME_EVERY = 10.0
#: metrics readings kept waiting at most (the oldest go first when the disk is slow)
METRICS_BACKLOG = 64

Op = list[Any]


def _json(value: Any) -> Any:
    """An object of a collection as recorded (a read pod back in Kubernetes form)."""
    return pod_to_dict(value) if isinstance(value, PodInfo) else value


def _key(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _capture(objects: ClusterObjects) -> ClusterObjects:
    """Shallow copies of the mappings the cache goes on changing after this build."""
    return ClusterObjects(
        nodes=dict(objects.nodes), pods=dict(objects.pods), daemonsets=dict(objects.daemonsets),
        cluster_policies=tuple(objects.cluster_policies),
        nvidia_drivers=tuple(objects.nvidia_drivers), configmaps=dict(objects.configmaps),
        events=tuple(objects.events), label_times=dict(objects.label_times),
        operator_namespace=objects.operator_namespace, context=objects.context,
        server=objects.server, forbidden=frozenset(objects.forbidden),
        xids=objects.xids, loading=frozenset(objects.loading),
        gpu_health=objects.gpu_health, unreadable=dict(objects.unreadable),
        cluster_uid=objects.cluster_uid, disruption_budgets=objects.disruption_budgets)


class TapeWriter:
    """Appends a session to a recording file; see the module docstring.

    Args:
        path: the file, created 0600; an existing non-empty file is refused (a recording
            is never written over nor appended to).
        context / server: what the header names.
        keyframe_every: source seconds between keyframes, at the least.
        thresholds: the session's finding thresholds, kept in the header (a replay judges
            the recorded moments by them).
    """

    def __init__(self, path: Path, *, context: str, server: str,
                 keyframe_every: float = KEYFRAME_EVERY,
                 thresholds: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.keyframe_every = keyframe_every
        #: why recording stopped (a write failed), None while it works
        self.error: str | None = None
        #: objects frames and keyframes written so far
        self.frames = 0
        self.keyframes = 0
        self._fd = _open(self.path)
        self._zip = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip wrapper
        self._lock = threading.Condition()
        self._objects: tuple[ClusterObjects, float] | None = None
        self._metrics: deque[tuple[MetricsReading, float | None]] = deque(
            maxlen=METRICS_BACKLOG)
        self._timeline: list[list[dict[str, Any]]] = []
        self._closing = False
        self._closed = False
        self._busy = False  # the thread is encoding what it took
        self._prev: ClusterObjects | None = None
        self._small: dict[str, str] = {}
        self._cluster_uid = ""  # the kube-system UID the last cluster frame named
        self._key_at = 0.0
        self._key_bytes = 0
        self._delta_bytes = 0
        self._last_at = 0.0
        self._end_at = 0.0  # close(at=): where the session ended on the source's clock
        self._frame_at = 0.0  # the time of the last objects frame written
        self._encoder = MetricsEncoder()
        self._write([encode_line(header(context, server, time.time(), __version__,
                                        thresholds))])
        self._flush()
        self._thread = threading.Thread(target=self._loop, name="gputui-recorder",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ callers' side
    def objects(self, objects: ClusterObjects, now: float) -> None:
        """A successful build's input at ``now`` (the source's clock); never blocks on disk."""
        if self.error is not None or self._closing:
            return  # nothing more is written: no copy of the cache for nothing
        captured = _capture(objects)
        with self._lock:
            if not self._closing:
                self._objects = (captured, now)  # a build not yet written is superseded
                self._lock.notify_all()

    def metrics(self, reading: MetricsReading, at: float | None = None) -> None:
        """One metrics reading, read at ``at`` (default: its ``origin.updated_at``)."""
        with self._lock:
            if not self._closing:
                self._metrics.append((reading, at))
                self._lock.notify_all()

    def timeline(self, events: Sequence[Mapping[str, Any]]) -> None:
        """New timeline events (JSON-ready dicts, each with ``"at"``)."""
        batch = [dict(e) for e in events]
        if not batch:
            return
        with self._lock:
            if not self._closing:
                self._timeline.append(batch)
                self._lock.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until everything handed over is written (tests; a caller that must not lose
        an intermediate build); False when ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._has_work() or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._lock.wait(left)
        return True

    def close(self, at: float | None = None) -> None:
        """Write what is waiting, end the gzip stream and close the file; idempotent.
        ``at``: the source's time as the session ends; the recording then reaches it (the
        source builds only on a change, so the state of its last build held until then)."""
        with self._lock:
            if self._closed:
                return
            if at is not None:
                self._end_at = max(self._end_at, at)
            self._closing = True
            self._lock.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=30.0)
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self.error is None:
                write_all(self._fd, self._zip.flush(zlib.Z_FINISH))
                os.fsync(self._fd)
        except OSError as error:
            self._failed(error)
        finally:
            os.close(self._fd)

    # ------------------------------------------------------------ writer thread
    def _loop(self) -> None:
        last_flush = time.monotonic()
        dirty = False
        while True:
            with self._lock:
                if not self._has_work() and not self._closing:
                    # unflushed data waits no longer than FLUSH_EVERY after the last flush
                    self._lock.wait(max(0.0, last_flush + FLUSH_EVERY - time.monotonic())
                                    if dirty else FLUSH_EVERY)
                objects, self._objects = self._objects, None
                metrics = list(self._metrics)
                self._metrics.clear()
                timeline, self._timeline = self._timeline, []
                closing = self._closing
                self._busy = True
            if self.error is None:
                dirty |= self._encode_all(objects, metrics, timeline)
                if dirty and (closing or time.monotonic() - last_flush >= FLUSH_EVERY):
                    self._flush()
                    dirty, last_flush = False, time.monotonic()
            with self._lock:
                self._busy = False
                self._lock.notify_all()
                done = closing and not self._has_work()
            if done:
                self._last_frame()
                return

    def _last_frame(self) -> None:
        """On close: an empty frame where the session ended (``close(at=)``, else the last
        build's time), so the recording ends when the session did, not at its last change."""
        end = max(self._last_at, self._end_at)
        if self.error is None and self._prev is not None and end > self._frame_at:
            self._write([encode_line({"t": end, "k": DELTA, "end": 1, "ops": [],
                                      "whole": {}})])
            self._frame_at = end

    def _has_work(self) -> bool:
        return self._objects is not None or bool(self._metrics) or bool(self._timeline)

    def _encode_all(self, objects: tuple[ClusterObjects, float] | None,
                    metrics: list[tuple[MetricsReading, float | None]],
                    timeline: list[list[dict[str, Any]]]) -> bool:
        """Encode and compress what was taken; True when anything was written."""
        lines: list[bytes] = []
        wrote = False
        try:
            if objects is not None:  # line by line: a keyframe is never whole in memory
                # a keyframe of 5,000 nodes makes a million small dicts: collections over
                # the heap while they are made took 80% of its time (gctuning's rule)
                with gctuning.paused():
                    for line in self._objects_lines(*objects):
                        self._write([line])
                        wrote = True
            for reading, at in metrics:
                when = at if at is not None else (reading.origin.updated_at or self._last_at)
                if when > 0:  # a reading with no time (none yet) cannot be placed
                    lines.append(encode_line(self._encoder.frame(reading, when)))
            for batch in timeline:
                times = [float(e["at"]) for e in batch
                         if isinstance(e.get("at"), int | float) and e["at"] > 0]
                if times:
                    lines.append(encode_line({"t": max(times), "k": TIMELINE,
                                              "events": batch}))
        except (TypeError, ValueError) as error:  # something not JSON: a bug, said once
            log.exception("recording: cannot encode a frame")
            self._failed(error)
            return False
        self._write(lines)
        return wrote or bool(lines)

    # ------------------------------------------------------------ objects frames
    def _objects_lines(self, objects: ClusterObjects, now: float) -> Iterator[bytes]:
        """The lines of one build: a keyframe when due, else a delta against the last."""
        self._last_at = now
        if objects.cluster_uid != self._cluster_uid:  # which cluster: before its objects
            self._cluster_uid = objects.cluster_uid
            yield encode_line(cluster_frame(now, objects.server, objects.cluster_uid))
        key = self._keyframe_due(now)
        prev = None if key else self._prev
        ops = list(self._ops(prev, objects))
        whole = self._whole(prev, objects)
        self._prev = objects
        if prev is not None and not ops and not whole and now - self._frame_at < IDLE_FRAME_EVERY:
            return  # nothing changed: no frame (the reader keeps the state)
        self._frame_at = now
        kind = KEYFRAME if key else DELTA
        size = 0
        parts = [ops[i:i + PART_OPS] for i in range(0, len(ops), PART_OPS)] or [[]]
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            frame: dict[str, Any] = {"t": now, "k": kind, "end": int(last), "ops": part}
            if last:
                frame["whole"] = whole
            line = encode_line(frame)
            size += len(line)
            yield line
        self.frames += 1
        if key:
            self.keyframes += 1
            self._key_at, self._key_bytes, self._delta_bytes = now, size, 0
        else:
            self._delta_bytes += size

    def _keyframe_due(self, now: float) -> bool:
        """The first build, then every ``keyframe_every`` source seconds once the deltas
        since the last keyframe weigh half as much as it did: a keyframe bounds how much a
        damaged delta can spoil, and an idle cluster does not pay for one it does not need."""
        if self._prev is None:
            return True
        return (now - self._key_at >= self.keyframe_every
                and self._delta_bytes * 2 >= self._key_bytes)

    def _ops(self, prev: ClusterObjects | None, new: ClusterObjects) -> Iterator[Op]:
        for name in COLLECTIONS:
            after: Mapping[Any, Any] = getattr(new, name)
            if prev is None:
                yield from ([name, SET, _key(k), _json(v)] for k, v in after.items())
            else:
                yield from _changes(name, getattr(prev, name), after)

    def _whole(self, prev: ClusterObjects | None, new: ClusterObjects) -> dict[str, Any]:
        """The small cluster-wide fields that changed (all of them for a keyframe)."""
        if prev is not None and all(getattr(prev, f) is getattr(new, f) for f in SMALL_FIELDS):
            return {}
        small = objects_to_json(ClusterObjects(**{f: getattr(new, f) for f in SMALL_FIELDS}))
        changed: dict[str, Any] = {}
        for field in SMALL_FIELDS:
            if prev is not None and getattr(prev, field) is getattr(new, field):
                continue
            text = json.dumps(small[field], sort_keys=True)
            if prev is None or self._small.get(field) != text:
                changed[field] = small[field]
                self._small[field] = text
        return changed

    # ------------------------------------------------------------ the file
    def _write(self, lines: list[bytes]) -> None:
        try:
            for line in lines:
                data = self._zip.compress(line)
                if data:
                    write_all(self._fd, data)
        except OSError as error:
            self._failed(error)

    def _flush(self) -> None:
        """End the deflate block so everything so far is readable (a kill -9 keeps it)."""
        try:
            write_all(self._fd, self._zip.flush(zlib.Z_SYNC_FLUSH))
        except OSError as error:
            self._failed(error)

    def _failed(self, error: Exception) -> None:
        if self.error is None:
            self.error = f"recording to {self.path} stopped: {error}"
            log.error("%s", self.error)


def _changes(name: str, before: Mapping[Any, Any], after: Mapping[Any, Any]) -> Iterator[Op]:
    """The ops turning ``before`` into ``after``. Which objects changed or came is told by
    identity in C (``map`` and ``compress`` over the mappings, no set of 45,000 keys: that
    measured ten times slower), and removals are looked for only when the sizes say some
    object went."""
    added = 0
    for key in compress(after.keys(), map(is_not, after.values(), map(before.get, after))):
        value = _json(after[key])
        old = before.get(key)
        if old is None:
            added += 1
            yield [name, SET, _key(key), value]
            continue
        if name == "nodes" and heartbeat_only(old, after[key]):
            continue  # the next real change is written against the newest state
        patch = merge_diff(_json(old), value)
        if patch is None:
            yield [name, SET, _key(key), value]
        elif patch:
            yield [name, PATCH, _key(key), patch]
    if len(before) + added != len(after):
        yield from ([name, DELETE, _key(k), None] for k in before if k not in after)


def _open(path: Path) -> int:
    """The file, created 0600 (no symlink followed); an existing recording is refused."""
    try:
        fd = open_private(path, "recording")
    except PrivateFileError as error:
        raise TapeError(str(error)) from None
    if os.fstat(fd).st_size > 0:
        os.close(fd)
        raise TapeError(f"recording {path} exists already; gputui does not write over or "
                        "append to a recording")
    return fd
