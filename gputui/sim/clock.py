"""The emulated cluster's clock: wall time scaled by a speed factor.

Every timeout, run time and progress step in the emulated cluster reads this clock, so
``--speed 10`` plays ten minutes of operator behaviour in one. Tests can also freeze it and
move it by hand with :meth:`SimClock.advance`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime


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

    @property
    def speed(self) -> float:
        return self._speed

    def now(self) -> float:
        """Current emulated time, epoch seconds."""
        with self._lock:
            if self._frozen:
                return self._base_sim
            return self._base_sim + (time.monotonic() - self._base_mono) * self._speed

    def now_dt(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC)

    def rfc3339(self, at: float | None = None) -> str:
        """Kubernetes timestamp format (second precision, ``Z``)."""
        moment = self.now() if at is None else at
        return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def advance(self, seconds: float) -> None:
        """Move emulated time forward (used by tests and by frozen clocks)."""
        with self._lock:
            self._base_sim += seconds

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        with self._lock:
            now_mono = time.monotonic()
            if not self._frozen:
                self._base_sim += (now_mono - self._base_mono) * self._speed
            self._base_mono = now_mono
            self._speed = speed

    def wall_seconds(self, sim_seconds: float) -> float:
        """How long ``sim_seconds`` of emulated time take on the wall clock."""
        return sim_seconds / self._speed

    async def sleep(self, sim_seconds: float) -> None:
        """Sleep for an emulated duration."""
        await asyncio.sleep(max(0.0, sim_seconds / self._speed))
