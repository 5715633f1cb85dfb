"""``SnapshotPace``: the newest snapshot is applied at most every ``interval`` seconds.

Why a pace: a 5,000-node cluster can change 1,000 nodes a second; repainting for each would
starve key presses. Applying the newest snapshot a few times a second keeps the screen
current to the eye and the keyboard responsive, and a snapshot that arrives while one waits
replaces it (the screen shows the newest cluster, never a backlog). A plain object: the app
hands it what arrives and how to apply; tests drive it with a fake timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gputui.domain.model import ClusterSnapshot

#: default pace of applied snapshots (seconds); the newest one always wins
MIN_SNAPSHOT_INTERVAL = 0.25

#: ``set_timer(delay, callback)`` -> a timer with ``stop()`` (Textual's ``App.set_timer``)
SetTimer = Callable[[float, Callable[[], None]], Any]


class SnapshotPace:
    """Keeps the newest snapshot and applies it now, or once the interval has passed."""

    def __init__(self, apply: Callable[[ClusterSnapshot], None], set_timer: SetTimer,
                 interval: float = MIN_SNAPSHOT_INTERVAL,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._apply = apply
        self._set_timer = set_timer
        #: seconds between two applied snapshots (tests set 0 to apply each at once)
        self.interval = interval
        self._monotonic = monotonic
        self._pending: ClusterSnapshot | None = None
        self._timer: Any = None
        self._last = float("-inf")
        self.applied = 0

    def offer(self, snapshot: ClusterSnapshot) -> None:
        """``snapshot`` is the newest: apply it now, or when the interval has passed."""
        self._pending = snapshot
        if self._timer is not None:
            return  # the waiting timer applies whatever is newest then
        wait = self._last + self.interval - self._monotonic()
        if wait <= 0:
            self._apply_pending()
        else:
            self._timer = self._set_timer(wait, self._apply_pending)

    def forget(self) -> None:
        """Drop what waits (a context switch: nothing of the old cluster is applied)."""
        self._pending = None

    def _apply_pending(self) -> None:
        self._timer = None
        snapshot, self._pending = self._pending, None
        if snapshot is None:
            return
        self._last = self._monotonic()
        self.applied += 1
        self._apply(snapshot)
