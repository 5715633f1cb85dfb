"""``Relay``: a source started before anyone listens, handing over what it said meanwhile.

Why: at 5,000 nodes the first lists take seconds to transfer, and importing and building
the TUI takes about a second of CPU. Started first, the source's requests are in flight
(and the server serialises its answers on another core) while the UI is still being built,
so the first rows show that much sooner. Until the listener attaches, the relay keeps only
the newest snapshot and status: each supersedes the one before, as on screen.
"""

from __future__ import annotations

import threading
from typing import Any

from gputui.sources.base import SnapshotCallback, StatusCallback


class Relay:
    """The callbacks a source is started with before its listener exists."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._on_snapshot: SnapshotCallback | None = None
        self._on_status: StatusCallback | None = None
        self._snapshot: Any = None
        self._status: Any = None

    def snapshot(self, snapshot: Any) -> None:
        """(source thread) A snapshot: to the listener, or kept until there is one."""
        with self._lock:
            if self._on_snapshot is None:
                self._snapshot = snapshot
                return
        self._on_snapshot(snapshot)

    def status(self, status: Any) -> None:
        """(source thread) A status: to the listener, or kept until there is one."""
        with self._lock:
            if self._on_status is None:
                self._status = status
                return
        self._on_status(status)

    def attach(self, on_snapshot: SnapshotCallback, on_status: StatusCallback) -> None:
        """The listener is here: hand it what was kept (under the lock, so nothing newer
        can overtake it), then everything as it comes."""
        with self._lock:
            if self._status is not None:
                on_status(self._status)
            if self._snapshot is not None:
                on_snapshot(self._snapshot)
            self._snapshot = self._status = None
            self._on_snapshot, self._on_status = on_snapshot, on_status
