"""``gputui replay FILE``'s source: the snapshot of a recording at the replay cursor's time.

Why one warm builder and a difference: a replay is stepped and jumped by an operator, and a
5,000-node cluster's full build takes seconds. The recording gives the objects as of any
time (:meth:`TapeReader.objects_at`); :func:`changed_nodes` tells which nodes' objects
differ from the previous build's, and the one :class:`SnapshotBuilder` rebuilds only those,
exactly as the live source does with the watch's changes. A step costs milliseconds; a far
jump costs what changed between the two times, so on a big cluster more warm builders are
parked across the recording and a jump moves the nearest (:mod:`gputui.sources.tape.pool`).

Read-only by construction: this source has no HTTP client, no kubeconfig and no
``target``, so the app gets no writer and ``:ctx`` has nothing to switch to. Pod logs and
events were never recorded: asking for them answers one line.

Headless: no textual. The build runs on this source's own thread, woken by every cursor
move and every ``TICK`` seconds while playing (ages move with the cursor).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from gputui import gctuning
from gputui.domain.metrics import MetricsOrigin, MetricsReading, MetricsWant
from gputui.domain.model import ClusterSnapshot
from gputui.domain.replay_cursor import PlayState, ReplayCursor
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, ThresholdsLike
from gputui.sources.base import Connection, SnapshotCallback, SourceStatus, StatusCallback
from gputui.sources.changes import changed_nodes
from gputui.sources.errors import SourceError
from gputui.sources.metrics import MetricsFeed
from gputui.sources.tape.pool import PARK_WHEN_SLOWER, BuilderPool, Costed, parking_times

log = logging.getLogger(__name__)

#: seconds between two builds while playing (the cursor's time moves every tick)
TICK = 0.5
#: what a pod log or events read answers in a replay
NOT_RECORDED = "not in the recording: gputui records no pod logs or events"
#: what the metrics pane says for a node without recorded metrics at the cursor
METRICS_NOT_RECORDED = "not recorded at this time (the node was not on screen while recording)"

TimelineCallback = Callable[[list[dict[str, Any]]], None]


class Tape(Costed, Protocol):
    """What the replay reads of a recording (``gputui.sources.tape.reader.TapeReader``):
    what its builders read (:class:`~gputui.sources.tape.pool.Costed`), and more."""

    context: str
    server: str
    recorded_at: float
    start: float
    end: float

    def change_times(self) -> Sequence[float]: ...

    def timeline_until(self, at: float) -> list[dict[str, Any]]: ...

    def metrics_at(self, at: float, want: MetricsWant) -> MetricsReading | None: ...


class TapeSource:
    """A :class:`~gputui.sources.base.ClusterSource` over a recording and a cursor.

    Args:
        tape: the opened recording.
        cursor: the replay's time cursor; every move builds the snapshot at its position.
        thresholds: finding thresholds (the settings'), as the live source uses.
    """

    def __init__(self, tape: Tape, cursor: ReplayCursor,
                 thresholds: ThresholdsLike = DEFAULT_THRESHOLDS) -> None:
        self.tape = tape
        self.cursor = cursor
        self._lock = threading.Lock()
        self.pool = BuilderPool(tape, SnapshotBuilder(thresholds), self._lock)
        #: park more warm builders when the first full build took longer than this (s)
        self.park_when_slower = PARK_WHEN_SLOWER
        self.parking: threading.Thread | None = None
        #: called (source thread) with the recorded timeline up to the cursor after a move
        self.on_timeline: TimelineCallback | None = None
        self.snapshot: ClusterSnapshot | None = None
        #: the cursor time of the last build, and how many builds (tests, benchmark)
        self.built_at = 0.0
        self.builds = 0
        self._timeline_count = -1
        self._on_snapshot: SnapshotCallback | None = None
        self._on_status: StatusCallback | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        cursor.listen(self._wake.set)

    # ------------------------------------------------------------------ ClusterSource
    def start(self, on_snapshot: SnapshotCallback, on_status: StatusCallback) -> None:
        """Build the snapshot at the cursor now and after every move (own thread)."""
        self._on_snapshot, self._on_status = on_snapshot, on_status
        self._stop.clear()
        self._wake.set()
        self._thread = threading.Thread(target=self._loop, name="gputui-replay", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop building; returns within one build."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    def status(self) -> SourceStatus:
        """A replay: context and server of the recording, the cursor's time and state."""
        return SourceStatus(Connection.REPLAY, context=self.tape.context,
                            server=self.tape.server, last_update=self._shown_at(),
                            recorded_at=self.tape.recorded_at,
                            play=self.cursor.play_state(), play_speed=self.cursor.speed)

    def _shown_at(self) -> float:
        """The time the screen shows: the last build's (the header's "at" must describe
        the panes under it, not a cursor that moved while a far jump is being built)."""
        return self.built_at if self.builds else self.cursor.position

    def pod_log(self, namespace: str, pod: str, container: str | None = None,
                tail_lines: int = 200) -> list[str]:
        """Never recorded: one line, no request."""
        raise SourceError(NOT_RECORDED)

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        """Never recorded: one line, no request."""
        raise SourceError(NOT_RECORDED)

    # ------------------------------------------------------------------ building
    def build_at(self, at: float) -> ClusterSnapshot:
        """The snapshot of the recording at ``at``, built by the warm builder with least to
        redo from what changed since its last build (the first build is a full one)."""
        # gctuning's rule for every build, here from the copy of the objects on: a
        # collection set off by that copy walked the parked builders' heaps mid-jump
        with self._lock, gctuning.paused():
            warm = self.pool.nearest(at)
            objects = self.tape.objects_at(at)
            previous = warm.objects
            changes = None if previous is None else changed_nodes(previous, objects)
            snapshot = warm.builder.build(objects, at, changed_nodes=changes)
            warm.objects, warm.at, self.snapshot = objects, at, snapshot
            self.built_at, self.builds = at, self.builds + 1
            self.pool.last_used = time.monotonic()  # parking waits for a pause in jumps
            return snapshot

    def park_builders(self) -> threading.Thread:
        """Park warm builders across the recording now, on their own thread (see
        :mod:`gputui.sources.tape.pool`)."""
        self.parking = self.pool.park_in_background(parking_times(self.tape), self._stop)
        return self.parking

    def timeline_at(self, at: float) -> list[dict[str, Any]] | None:
        """The recorded timeline up to ``at``, or None when it is the one given last."""
        events = self.tape.timeline_until(at)
        if len(events) == self._timeline_count:
            return None
        self._timeline_count = len(events)
        return events

    def _loop(self) -> None:
        seen = -1
        while not self._stop.is_set():
            playing = self.cursor.playing
            self._wake.wait(TICK if playing else None)
            self._wake.clear()
            if self._stop.is_set():
                return
            if self.cursor.version == seen and not playing:
                continue
            seen = self.cursor.version
            if not playing and self.builds and self.cursor.position != self.built_at:
                # a jump at 5,000 nodes can take a second or more: say at once that the
                # key was taken, and keep saying what the panes show until the build is in
                self._report(replace(self.status(), play=PlayState.SEEKING))
            first = not self.builds
            began = time.monotonic()
            self._build_and_deliver(self.cursor.position)
            if first and self.builds and time.monotonic() - began > self.park_when_slower:
                self.park_builders()  # a big cluster: far jumps need builders nearby

    def _build_and_deliver(self, at: float) -> None:
        try:
            snapshot = self.build_at(at)
            timeline = self.timeline_at(at)
        except Exception as error:  # broad: a bad frame or a domain bug is said in the
            # header and the replay stays where it was, it never ends the thread
            log.exception("replay build failed at %s", at)
            self._report(SourceStatus(Connection.REPLAY, context=self.tape.context,
                                      server=self.tape.server, last_update=at,
                                      message=f"cannot show this time: {error}",
                                      recorded_at=self.tape.recorded_at))
            return
        _call(self._on_snapshot, snapshot)
        if timeline is not None and self.on_timeline is not None:
            _call(self.on_timeline, timeline)
        self._report(self.status())

    def _report(self, status: SourceStatus) -> None:
        _call(self._on_status, status)


def _call(callback: Callable[[Any], None] | None, value: Any) -> None:
    if callback is None:
        return
    try:
        callback(value)
    except Exception:  # broad: the caller's bug must not end the replay thread
        log.exception("replay callback failed")


class TapeMetrics(MetricsFeed):
    """The metrics feed of a replay: what was recorded at the cursor, for what is on screen.

    The feed's loop and ``want`` are the live feed's; a reading comes from
    :meth:`Tape.metrics_at` instead of a scrape, and every cursor move reads again.
    """

    def __init__(self, tape: Tape, cursor: ReplayCursor, refresh: float = 2.0) -> None:
        super().__init__(refresh=refresh, clock=lambda: cursor.position)
        self.tape = tape
        self.cursor = cursor
        cursor.listen(self._wake.set)

    def read_once(self) -> MetricsReading:
        """The newest recorded reading at or before the cursor covering what is wanted."""
        at = self.cursor.position
        want = self._want
        reading = self.tape.metrics_at(at, want)
        if reading is None:
            reading = MetricsReading(MetricsOrigin("replay", "", 0.0,
                                                   error=METRICS_NOT_RECORDED))
        else:
            origin = reading.origin
            node = reading.node
            missing = bool(want.selected) and (node is None or node.node != want.selected)
            where = f"{origin.kind} {origin.where}".strip()
            reading = MetricsReading(MetricsOrigin(
                "replay", where, origin.updated_at, origin.fallback, origin.since,
                METRICS_NOT_RECORDED if missing else origin.error),
                reading.fleet, None if missing else node, reading.node_util)
        self.last = reading
        self.readings += 1
        return reading

