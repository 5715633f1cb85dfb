"""Fold the feeds' states into the one :class:`SourceStatus` line the header shows.

Why a separate tracker: eight feeds fail and recover independently, but the operator wants
one answer ("live", "reconnecting since 14:02:11: connection refused", "events forbidden"),
and "stale since" must be the moment the *first* feed lost the server, kept until the last
one is back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gputui.domain.sanitize import clean_line
from gputui.domain.readgaps import FORBIDDEN, NOT_SERVED, REFUSED
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.reflector import FeedState
from gputui.sources.resources import resource_of, unreadable_resources

_SETTLED = (FeedState.SYNCED, FeedState.FORBIDDEN, FeedState.ABSENT)
#: feed states that leave their resource unread, with the reason the snapshot carries
_UNREADABLE = {FeedState.FORBIDDEN: FORBIDDEN, FeedState.ABSENT: NOT_SERVED}


class StatusTracker:
    """Thread-safe; :meth:`current` is cheap and may be called from any thread."""

    def __init__(self, context: str, server: str, clock: Callable[[], float] = time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self._states: dict[str, tuple[FeedState, str]] = {}
        self._listed: set[str] = set()  # feeds whose current run has answered once
        self._context = clean_line(context)  # shown in the header: a display name
        self._server = server
        self._last_update = 0.0
        self._stale_since = 0.0
        self._failure = ""  # a problem before any feed runs (server unreachable at start)
        self._failed = False
        self._build_error = ""  # the last snapshot build failed: the data shown is old
        self._retrying: dict[int, str] = {}  # requesting thread -> what it is retrying
        self._credential = ""  # the credential plugin's last failure, until it works again

    def feed(self, name: str, state: FeedState, message: str) -> None:
        with self._lock:
            self._states[name] = (state, message)
            if state is FeedState.SYNCING:
                self._listed.discard(name)
            elif state in _SETTLED:
                self._listed.add(name)
            self._refresh_stale()

    def forget(self, name: str) -> None:
        with self._lock:
            self._states.pop(name, None)
            self._listed.discard(name)
            self._refresh_stale()

    def touch(self) -> None:
        """Data proved current now (an event, a list, a bookmark)."""
        with self._lock:
            self._last_update = self._clock()

    def connecting_failed(self, message: str, permanent: bool = False) -> None:
        """The first connection attempt failed; ``permanent`` when retrying cannot help."""
        with self._lock:
            self._failure = message
            self._failed = permanent
            if not self._stale_since:
                self._stale_since = self._clock()

    def connected(self) -> None:
        with self._lock:
            self._failure = ""
            self._failed = False
            self._refresh_stale()

    def retrying(self, thread: int, message: str | None) -> bool:
        """A request of ``thread`` is being retried (``message``), or no more (None): the
        data is still current, but the operator should know the server is struggling.
        True when what the header would say changed."""
        with self._lock:
            before = self._retrying.get(thread)
            if message is None:
                self._retrying.pop(thread, None)
            else:
                self._retrying[thread] = message
            return before != message

    def credential(self, message: str | None) -> bool:
        """The credential plugin failed (``message``) or works again (None); it leads the
        header's message and retry note until then. True when that changed."""
        with self._lock:
            before, self._credential = self._credential, message or ""
            return before != self._credential

    def build_failed(self, message: str) -> None:
        """The snapshot builder failed: the cache may be current, what is shown is not."""
        with self._lock:
            self._build_error = message
            self._refresh_stale()

    def build_succeeded(self) -> None:
        with self._lock:
            if self._build_error:
                self._build_error = ""
                self._refresh_stale()

    def _refresh_stale(self) -> None:
        broken = self._failure or self._build_error or any(
            s is FeedState.DISCONNECTED for s, _ in self._states.values())
        if broken and not self._stale_since:
            self._stale_since = self._clock()
        elif not broken:
            self._stale_since = 0.0

    @property
    def settled(self) -> bool:
        """Every feed has answered once (synced, forbidden or absent)."""
        with self._lock:
            return bool(self._states) and all(
                s in _SETTLED for s, _ in self._states.values()) and not self._failure

    def listed(self, name: str) -> bool:
        """The feed has answered since it (re)started: its content is known."""
        with self._lock:
            return name in self._listed

    def loading(self) -> frozenset[str]:
        """Resources some feed of which has not answered yet (``pods``, ``nodes`` ...)."""
        with self._lock:
            return frozenset(resource_of(n) for n in self._states if n not in self._listed)

    def forbidden(self) -> tuple[str, ...]:
        with self._lock:
            return self._forbidden()

    def _forbidden(self) -> tuple[str, ...]:
        names = {resource_of(n)
                 for n, (s, _) in self._states.items() if s is FeedState.FORBIDDEN}
        return tuple(sorted(names))

    def unreadable(self) -> dict[str, str]:
        """Resource -> why it cannot be read now: ``forbidden`` (403) or ``not-served`` (a
        404 on an optional feed: its CRD is not installed). The domain decides what each
        hides (:mod:`gputui.domain.readgaps`); a 403 anywhere wins over a 404."""
        with self._lock:
            return unreadable_resources(
                [(name, _UNREADABLE[state]) for name, (state, _) in self._states.items()
                 if state in _UNREADABLE]
                + [(name, REFUSED) for name, (state, message) in self._states.items()
                   if state is FeedState.SYNCED and message])

    def current(self) -> SourceStatus:
        with self._lock:
            return SourceStatus(connection=self._connection(), context=self._context,
                                server=self._server, last_update=self._last_update,
                                stale_since=self._stale_since, message=self._message(),
                                forbidden=self._forbidden(), retrying=self._retry_note())

    def _retry_note(self) -> str:
        if self._credential:
            return self._credential
        if not self._retrying:
            return ""
        first = next(iter(self._retrying.values()))
        more = len(self._retrying) - 1
        return first + (f" (+{more} more requests)" if more else "")

    def _connection(self) -> Connection:
        if self._failed:
            return Connection.FAILED
        if self._failure:
            return Connection.RECONNECTING if self._last_update else Connection.CONNECTING
        states = [s for s, _ in self._states.values()]
        if any(s is FeedState.DISCONNECTED for s in states):
            return Connection.RECONNECTING
        if states and all(s in _SETTLED for s in states):
            return Connection.LIVE
        return Connection.CONNECTING

    def _message(self) -> str:
        if self._credential:
            return self._credential
        if self._failure:
            return self._failure
        for name, (state, message) in sorted(self._states.items()):
            if state is FeedState.DISCONNECTED:
                return f"{message}; retrying" if message else f"{name}: reconnecting"
        if self._build_error:
            return f"snapshot build failed: {self._build_error}"
        forbidden = self._forbidden()
        if forbidden:
            return f"forbidden: {', '.join(forbidden)}"
        for _, (state, message) in sorted(self._states.items()):
            if state is FeedState.SYNCED and message:  # objects it could not read
                return message
        return ""
