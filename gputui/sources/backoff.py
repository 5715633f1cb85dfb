"""Per-target back-off for metrics reads: a failing exporter is asked again in minutes.

A dcgm-exporter scrape goes through the API server's pod proxy, and when the proxy cannot
reach the pods (400 "address not allowed" where the server may not proxy to pod IPs, 503 for
a dead or firewalled pod, a timeout, an answer that is not metrics) it fails the same way
every time. Asked again every refresh, one TUI sent 1,379 failing scrapes in 577 s against
a real cluster (issue 26). So each exporter (and Prometheus) that fails waits before its next
attempt: 10 s, then twice as long after each failure, up to 5 minutes, jittered so many
clients do not come back in step; one answer resets it. A 403 is not a per-exporter matter:
:class:`~gputui.sources.retry.ForbiddenGate` closes every scrape at once.

:func:`failure_phrase` names a failure in the few words the header and ``check`` show
("503 from the pod proxy"), :func:`failures_summary` many of them at once ("503 from the pod
proxy on 6 of 6 exporters").
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from gputui.domain.timefmt import duration
from gputui.sources.errors import AnswerError, ApiStatusError, SourceError, UnreachableError

K = TypeVar("K", bound=Hashable)

#: seconds before the first retry of a failed read, then doubled per failure
FIRST_RETRY = 10.0
#: the longest wait between two attempts (before jitter)
MAX_RETRY = 300.0
#: +-share of each wait drawn at random
JITTER = 0.2
#: the longest part of a server's own sentence kept in a phrase (it is hostile text)
_DETAIL = 48


class BackingOff(SourceError):
    """A read not sent because its target failed recently; ``phrase`` is that failure."""

    def __init__(self, phrase: str, wait: float):
        super().__init__(f"{phrase}; asking again in {duration(max(1.0, wait))}")
        self.phrase = phrase


@dataclass
class _State:
    failures: int
    until: float
    phrase: str


class TargetBackoff(Generic[K]):
    """Which targets may be read now; thread-safe (parallel scrapes share one).

    Args:
        first: seconds before the first retry; doubled after each further failure.
        cap: the longest wait (5 minutes), before jitter.
        clock: monotonic seconds (a test's counting clock).
    """

    def __init__(self, first: float = FIRST_RETRY, cap: float = MAX_RETRY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.first = first
        self.cap = cap
        self._clock = clock
        self._lock = threading.Lock()
        self._state: dict[K, _State] = {}

    def due(self, key: K) -> bool:
        """Whether ``key`` may be read now (never failed, answered since, or its wait is up)."""
        with self._lock:
            state = self._state.get(key)
            return state is None or self._clock() >= state.until

    def deferred(self, key: K) -> BackingOff:
        """The error a skipped read of ``key`` reports: its last failure and the wait left."""
        with self._lock:
            state = self._state.get(key)
            if state is None:
                return BackingOff("not read yet", 0.0)
            return BackingOff(state.phrase, state.until - self._clock())

    def failed(self, key: K, phrase: str) -> float:
        """``key`` failed with ``phrase``; returns the seconds before it is asked again."""
        with self._lock:
            failures = (self._state[key].failures if key in self._state else 0) + 1
            wait = min(self.cap, self.first * 2.0 ** (failures - 1))
            wait *= random.uniform(1.0 - JITTER, 1.0 + JITTER)
            self._state[key] = _State(failures, self._clock() + wait, phrase)
            return wait

    def answered(self, key: K) -> None:
        """``key`` answered: the next read goes at once."""
        with self._lock:
            self._state.pop(key, None)

    def phrase(self, key: K) -> str:
        """Why ``key`` is failing ("" when it is not)."""
        with self._lock:
            state = self._state.get(key)
            return state.phrase if state is not None else ""

    def keep_only(self, keys: Iterable[K]) -> None:
        """Forget targets that are gone (a replaced exporter pod is a new target)."""
        wanted = set(keys)
        with self._lock:
            for key in [k for k in self._state if k not in wanted]:
                del self._state[key]


def failure_phrase(error: SourceError, where: str = "the pod proxy") -> str:
    """A failed read in a few words: ``503 from the pod proxy``, ``400 from the pod proxy:
    address not allowed``, ``timed out``, ``unreadable answer``."""
    if isinstance(error, BackingOff):
        return error.phrase
    if isinstance(error, ApiStatusError):
        detail = error.detail[:_DETAIL] if error.code == 400 and error.detail else ""
        return f"{error.code} from {where}" + (f": {detail}" if detail else "")
    if isinstance(error, AnswerError):
        return "unreadable answer (not metrics)"
    text = str(error)
    if isinstance(error, UnreachableError) or "timed out" in text.lower():
        return "timed out" if "timed out" in text.lower() else "no answer"
    return text[:_DETAIL * 2]


def failures_summary(phrases: Iterable[str], total: int, what: str = "exporters") -> str:
    """``503 from the pod proxy on 6 of 6 exporters`` (the commonest failure first; others
    follow: ``..., timed out on 2``)."""
    counts = Counter(phrases).most_common()
    if not counts:
        return ""
    (first, count), rest = counts[0], counts[1:]
    text = f"{first} on {count} of {total} {what}"
    return text + "".join(f", {phrase} on {n}" for phrase, n in rest)
