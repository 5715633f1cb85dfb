"""The emulated cluster's clock: wall time scaled by a speed factor, never ahead of its
controllers.

Every timeout, run time and progress step in the emulated cluster reads this clock, so
``--speed 10`` plays ten minutes of operator behaviour in one. Tests can also freeze it and
move it by hand with :meth:`SimClock.advance`.

The controllers wait on this clock (:meth:`SimClock.sleep`, :meth:`SimClock.wait`), not on
wall-clock timers, and the clock is a discrete-event scheduler: emulated time flows with the
wall clock only up to the earliest pending wake-up. A pacer task on the cluster's loop wakes
the controllers due at that instant, holds the time there until the work they set off has
run (their writes, the watches those wake, the next waits they start), and only then lets it
move on. On a quiet machine this is invisible: the controllers keep up and time flows at
``speed``. On a starved one (a CI runner, hundreds of times real time while a scenario
settles) the loop may not run for a second, which used to be minutes of emulated life passing
at once with no controller acting; now every wake-up still happens at its exact emulated
time, in order, and the clock then catches up as fast as the controllers allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import lru_cache

#: most loop turns the pacer yields, after waking the controllers due at one instant, for
#: the work they set off to finish (a cascade is a few turns deep; the API server's own I/O
#: may keep the loop busy for ever, so this bounds the wait)
SETTLE_TURNS = 64
#: turns yielded where the loop does not show its ready queue (deeper than any cascade here)
BLIND_TURNS = 8


class SimClock:
    """Emulated time in epoch seconds, running ``speed`` times faster than the wall clock."""

    def __init__(self, speed: float = 1.0, start: float | None = None, frozen: bool = False):
        if speed <= 0:
            raise ValueError("speed must be positive")
        self._lock = threading.Lock()
        self._speed = speed
        self._base_sim = time.time() if start is None else start
        self._base_mono = time.monotonic()
        self._frozen = frozen
        # the time may not pass the earliest pending wake-up (inf: none pending), nor fall
        # below the last advance() (a deliberate jump, taken even past pending wake-ups)
        self._gate = math.inf
        self._floor = -math.inf
        # pause_at(): the time stops there (a scenario read as it settled, not a bit later)
        self._limit = math.inf
        # held(): the time stands still while the cluster sets itself up
        self._holds: dict[int, float] = {}
        #: the earliest of ``_holds`` (inf: none), kept so a read need not look at them all
        self._held = math.inf
        # loop-thread state: pending wake-ups (at, seq, future), the pacer and its nap
        self._pending: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pacer: asyncio.Task[None] | None = None
        self._nap: asyncio.Future[None] | None = None

    @property
    def speed(self) -> float:
        return self._speed

    def _flow(self) -> float:
        """Wall-clock time scaled by the speed (the lock held): where time would be if every
        controller always kept up."""
        if self._frozen:
            return self._base_sim
        return self._base_sim + (time.monotonic() - self._base_mono) * self._speed

    def _stop(self) -> float:
        """Where the time must stop for now (the lock held): a hold, a pause, a wake-up."""
        return min(max(min(self._gate, self._held), self._floor), self._limit)

    def _now(self) -> float:
        """``min(_flow(), _stop())`` written out (the lock held): a scenario's set-up reads
        the time for each of ~70,000 writes at 5,000 nodes, and the calls were most of
        each read."""
        flow = self._base_sim if self._frozen else \
            self._base_sim + (time.monotonic() - self._base_mono) * self._speed
        return min(flow, max(min(self._gate, self._held), self._floor), self._limit)

    def now(self) -> float:
        """Current emulated time, epoch seconds."""
        with self._lock:
            return self._now()

    def now_dt(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC)

    def rfc3339(self, at: float | None = None) -> str:
        """Kubernetes timestamp format (second precision, ``Z``)."""
        return _rfc3339(math.floor(self.now() if at is None else at))

    def advance(self, seconds: float) -> None:
        """Move emulated time forward at once (used by tests and by frozen clocks); waits
        that fall in the jump end at the new time, as a host's timers do after a suspend."""
        with self._lock:
            moved = self._now() + seconds
            self._base_sim += seconds
            self._floor = max(self._floor, moved)
        self._poke_threadsafe()

    def set_speed(self, speed: float) -> None:
        """Run at ``speed`` from the current emulated time (any lag of the controllers
        behind the wall clock is dropped, not caught up at the new speed)."""
        if speed <= 0:
            raise ValueError("speed must be positive")
        with self._lock:
            self._base_sim = self._now()
            self._base_mono = time.monotonic()
            self._speed = speed
        self._poke_threadsafe()

    def pause_at(self, moment: float | None) -> None:
        """Stop the time at ``moment`` (epoch seconds) when it gets there, whatever the
        wall clock does, until called again with None (``check --demo`` settles a scenario
        at hundreds of times real time and reads it exactly at its settle time, however
        late its own thread looks)."""
        with self._lock:
            if moment is None:
                # resume from where it stopped, not from where the wall clock has gone
                self._base_sim = self._now()
                self._base_mono = time.monotonic()
                self._limit = math.inf
            else:
                self._limit = max(moment, self._now())  # never back in time
        self._poke_threadsafe()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Stop the time while the block runs (on the cluster's loop) and until the tasks it
        started have run up to their first wait: setting up a large cluster takes no
        emulated time, however long it takes on a loaded machine."""
        with self._lock:
            key = next(self._seq)
            self._holds[key] = self._now()
            self._held = min(self._holds.values())
        try:
            yield
        finally:
            self._schedule(0.0)  # at the held instant: the pacer lets the new tasks run first
            with self._lock:
                del self._holds[key]
                self._held = min(self._holds.values(), default=math.inf)
            self._poke()

    def wall_seconds(self, sim_seconds: float) -> float:
        """How long ``sim_seconds`` of emulated time take on the wall clock."""
        return sim_seconds / self._speed

    # ------------------------------------------------------------------ waits
    async def sleep(self, sim_seconds: float) -> None:
        """Sleep for an emulated duration (on the cluster's loop)."""
        wake = self._schedule(sim_seconds)
        try:
            await wake
        finally:
            self._drop(wake)

    async def wait(self, event: asyncio.Event, sim_seconds: float) -> bool:
        """Wait until ``event`` is set or ``sim_seconds`` of emulated time have passed;
        True when the event was set."""
        if event.is_set():
            return True
        wake = self._schedule(sim_seconds)
        setter = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait((wake, setter), return_when=asyncio.FIRST_COMPLETED)
        finally:
            setter.cancel()
            self._drop(wake)
        return event.is_set()

    async def close(self) -> None:
        """Stop the pacer (the cluster is stopping); waits still pending never end."""
        pacer, self._pacer = self._pacer, None
        if pacer is not None and not pacer.done():
            pacer.cancel()
            try:
                await pacer
            except asyncio.CancelledError:
                pass

    def _schedule(self, sim_seconds: float) -> asyncio.Future[None]:
        """A future that the pacer ends ``sim_seconds`` from now; starts the pacer."""
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[None] = loop.create_future()
        with self._lock:
            at = self._now() + max(0.0, sim_seconds)
            heapq.heappush(self._pending, (at, next(self._seq), wake))
            self._gate = min(self._gate, at)
        if self._pacer is None or self._pacer.done() or self._loop is not loop:
            self._loop = loop
            self._pacer = loop.create_task(self._pace())
        else:
            self._poke()
        return wake

    def _drop(self, wake: asyncio.Future[None]) -> None:
        """A wait ended or was given up: a cancelled one must not hold the time back."""
        if not wake.done():
            wake.cancel()
            self._poke()

    def _poke(self) -> None:
        """Wake the pacer from its nap so it looks at the pending wake-ups again."""
        if self._nap is not None and not self._nap.done():
            self._nap.set_result(None)

    def _poke_threadsafe(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._poke)
            except RuntimeError:  # the loop closed meanwhile: nothing waits on it
                pass

    # ------------------------------------------------------------------ pacer
    async def _pace(self) -> None:
        """Wake each pending wait at its emulated time, in order, holding the time at that
        instant until the work it sets off has run; returns when nothing is pending."""
        while True:
            with self._lock:
                while self._pending and self._pending[0][2].done():
                    heapq.heappop(self._pending)
                if not self._pending:
                    self._gate = math.inf
                    self._pacer = None
                    return
                at = self._pending[0][0]
                self._gate = at
                stop = min(self._limit, self._held)
                ahead = at - min(self._flow(), stop)
                paused = at > stop or self._frozen
                due: list[asyncio.Future[None]] = []
                if ahead <= 0:
                    while self._pending and self._pending[0][0] <= at:
                        due.append(heapq.heappop(self._pending)[2])
            if not due:
                await self._doze(None if paused else ahead / self._speed)
                continue
            for wake in due:
                if not wake.done():
                    wake.set_result(None)
            await _let_run()

    async def _doze(self, wall_seconds: float | None) -> None:
        """Sleep until the next wake-up is due on the wall clock or the pacer is poked."""
        loop = asyncio.get_running_loop()
        self._nap = nap = loop.create_future()
        timer = None
        if wall_seconds is not None:
            timer = loop.call_later(wall_seconds, _end, nap)
        try:
            await nap
        finally:
            self._nap = None
            if timer is not None:
                timer.cancel()


def _end(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _let_run() -> None:
    """Yield until the loop has nothing else ready (the woken controllers and what they set
    off have run up to their next wait), or :data:`SETTLE_TURNS` turns have passed."""
    loop = asyncio.get_running_loop()
    ready = getattr(loop, "_ready", None)  # asyncio's ready queue (CPython's base loop)
    for _ in range(SETTLE_TURNS if ready is not None else BLIND_TURNS):
        await asyncio.sleep(0)
        if ready is not None and not ready:
            return


@lru_cache(maxsize=65536)
def _rfc3339(second: int) -> str:
    """One whole second as Kubernetes writes it, kept: a scenario's set-up stamps half a
    million times, nearly all in the same few seconds (formatting each took 2 of its 13 s)."""
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
