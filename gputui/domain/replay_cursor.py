"""The time cursor of ``gputui replay``: where in the recording the screen is, and how it moves.

Why a domain object: the replay's keys (space, left/right, g/G, t, ]/[) and its source (which
builds the snapshot at the cursor) live on different threads and layers; one small, pure,
lock-guarded object holds the position so both read the same time, and tests drive it with
a fake monotonic clock instead of sleeping.

Times are epoch seconds on the recording's clock (the source's clock when it was recorded).
While playing, the position advances with the injected monotonic clock times ``speed`` and
stops (paused) at the end. Every move bumps :attr:`ReplayCursor.version` and calls the
listeners, so the source builds once per move, not on a timer.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Sequence
from enum import Enum

#: play speeds, recording seconds per real second (``]`` faster, ``[`` slower)
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: the speed a replay starts with when played
DEFAULT_SPEED = 1.0

Listener = Callable[[], None]


class PlayState(Enum):
    """Where the replay's time is going, for the header (``SourceStatus.play``): a value,
    not a word to parse."""

    PAUSED = "paused"
    PLAYING = "playing"
    #: paused at the last moment of the recording
    END = "end"
    #: the source is building a far jump; the panes still show the time before it
    SEEKING = "seeking"


class ReplayCursor:
    """A position in ``[start, end]`` over the sorted ``changes`` (times objects changed).

    Args:
        changes: times at which the recording changed (sorted or not; duplicates ignored).
        start: first time of the recording; ``end``: last (``end >= start``).
        monotonic: the real clock that drives play (``time.monotonic``; tests pass a fake).
        at: initial position (default ``start``), clamped to the range.
    """

    def __init__(self, changes: Sequence[float], start: float, end: float, *,
                 monotonic: Callable[[], float], at: float | None = None) -> None:
        self.start = float(start)
        self.end = max(float(end), self.start)
        self.changes: tuple[float, ...] = tuple(sorted({float(t) for t in changes
                                                       if self.start <= t <= self.end}))
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._position = self._clamp(self.start if at is None else at)
        self._anchor = 0.0  # monotonic time at which _position was true (while playing)
        self._playing = False
        self._speed = DEFAULT_SPEED
        self._listeners: list[Listener] = []
        #: bumped on every move (a source compares it to know whether to build again)
        self.version = 0

    # ------------------------------------------------------------------ reading
    @property
    def position(self) -> float:
        """The cursor's time now (advances while playing; stops at the end)."""
        with self._lock:
            return self._now()

    @property
    def playing(self) -> bool:
        """True while the position advances by itself (false again once at the end)."""
        with self._lock:
            self._now()
            return self._playing

    @property
    def speed(self) -> float:
        """Recording seconds per real second while playing."""
        return self._speed

    def play_state(self) -> PlayState:
        """Playing, paused, or paused at the end (the speed is :attr:`speed`)."""
        with self._lock:
            position = self._now()
            if self._playing:
                return PlayState.PLAYING
            if position >= self.end and self.end > self.start:
                return PlayState.END
            return PlayState.PAUSED

    def listen(self, listener: Listener) -> None:
        """Call ``listener()`` after every move (from the thread that moved the cursor)."""
        self._listeners.append(listener)

    # ------------------------------------------------------------------ moves
    def toggle(self) -> None:
        """space: pause when playing, play when paused (from the start when at the end)."""
        with self._lock:
            position = self._now()
            if self._playing:
                self._playing = False
            else:
                if position >= self.end:
                    self._position = self.start
                self._playing = True
                self._anchor = self._monotonic()
        self._moved()

    def step(self, direction: int) -> bool:
        """left/right: pause on the previous/next change strictly before/after the position
        (the start/end when there is none); False when already there."""
        with self._lock:
            position = self._now()
            self._playing = False
            if direction > 0:
                index = bisect.bisect_right(self.changes, position)
                target = self.changes[index] if index < len(self.changes) else self.end
            else:
                index = bisect.bisect_left(self.changes, position)
                target = self.changes[index - 1] if index > 0 else self.start
            moved = target != position
            self._position = target
        self._moved()
        return moved

    def jump(self, at: float) -> None:
        """g, G, t: pause at ``at`` (clamped to the recording)."""
        with self._lock:
            self._playing = False
            self._position = self._clamp(at)
        self._moved()

    def to_start(self) -> None:
        """g: the first moment of the recording."""
        self.jump(self.start)

    def to_end(self) -> None:
        """G: the last moment of the recording."""
        self.jump(self.end)

    def faster(self) -> float:
        """``]``: the next speed up (the position so far is kept)."""
        return self._set_speed(+1)

    def slower(self) -> float:
        """``[``: the next speed down."""
        return self._set_speed(-1)

    # ------------------------------------------------------------------ internals
    def _set_speed(self, delta: int) -> float:
        with self._lock:
            self._position = self._now()
            self._anchor = self._monotonic()
            index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self._speed))
            self._speed = SPEEDS[max(0, min(len(SPEEDS) - 1, index + delta))]
            speed = self._speed
        self._moved()
        return speed

    def _now(self) -> float:
        """The position, advanced to now while playing (lock held)."""
        if self._playing:
            now = self._monotonic()
            position = self._position + (now - self._anchor) * self._speed
            self._anchor = now
            if position >= self.end:
                position = self.end
                self._playing = False
            self._position = position
        return self._position

    def _clamp(self, at: float) -> float:
        return min(self.end, max(self.start, float(at)))

    def _moved(self) -> None:
        self.version += 1
        for listener in list(self._listeners):
            listener()

