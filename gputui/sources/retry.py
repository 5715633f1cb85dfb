"""How gputui asks a struggling API server: a bounded request rate, and patient, polite retries.

Why here and not in urllib3: urllib3's ``Retry`` counts a 429 with ``Retry-After`` against
``status`` retries, so with none allowed the first 429 of an API server under priority and
fairness ended ``gputui check`` with "too many 429 error responses", where kubectl 1.20 (client-go)
waits the ``Retry-After`` and asks again, up to ten times. This module does what client-go
does, for GETs (every request :class:`~gputui.sources.http.KubeHttp` makes is a read):

- a token bucket shared by every thread of one client, so whatever fails and however many
  feeds relist at once, the server never sees more than ``rate`` requests a second (plus one
  ``burst``) from this process;
- 429 and 5xx answers, and connections reset before or during the body, are retried with
  capped exponential back-off and jitter, waiting at least the server's ``Retry-After``;
- each attempt, wait and give-up is written to the debug log (``--log-file``).

A request that got no answer at all (refused, dropped) is retried only briefly: a server that is down is reported quickly and
the reflectors' own back-off takes over, as kubectl reports it at once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from gputui.sources.errors import ApiStatusError, SourceError, UnreachableError

log = logging.getLogger("gputui.sources.retry")

T = TypeVar("T")

#: answers worth asking again: throttled, or a server (or proxy) failing for a moment
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Limits of the retry loop; the defaults are client-go's patience and then some."""

    #: attempts per request, the first included (client-go: 10 retries after a 429)
    max_attempts: int = 11
    #: attempts when no answer came at all (refused, dropped: the server is down, say so soon)
    no_answer_attempts: int = 3
    #: first back-off in seconds; doubles per attempt up to ``cap``
    initial: float = 0.25
    cap: float = 8.0
    #: the longest ``Retry-After`` honoured as given (a larger one is clipped to this)
    max_retry_after: float = 30.0
    #: no new attempt starts after this many seconds since the first
    deadline: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before attempt ``attempt + 1``: jittered back-off, at least Retry-After."""
        backoff = min(self.cap, self.initial * 2.0 ** max(0, attempt - 1))
        if retry_after is not None:  # what the server asked, plus a little spread
            return min(self.max_retry_after, retry_after) + random.uniform(0.0, 0.25 * backoff)
        return backoff * random.uniform(0.5, 1.5)


class RateLimiter:
    """A token bucket: at most ``rate`` requests a second on average, ``burst`` at once.

    Thread-safe; :meth:`acquire` blocks the calling thread until a token is free and says in
    the debug log when it had to wait, so a throttled client is visible.
    """

    def __init__(self, rate: float = 50.0, burst: int = 100,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._stamp = clock()
        self.granted = 0
        self.waited = 0.0

    def acquire(self) -> float:
        """Take one token, sleeping until one is free; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            self._tokens -= 1.0
            self.granted += 1
            wait = -self._tokens / self.rate if self._tokens < 0 else 0.0
            self.waited += wait
        if wait > 0:
            log.debug("rate limit: waiting %.2f s for a request slot (%.0f/s, burst %d)",
                      wait, self.rate, self.burst)
            self._sleep(wait)
        return wait


def _retryable(error: SourceError, attempt: int, policy: RetryPolicy) -> bool:
    if isinstance(error, ApiStatusError):
        return error.code in RETRY_STATUS and attempt < policy.max_attempts
    if isinstance(error, UnreachableError):
        limit = policy.no_answer_attempts if error.no_answer else policy.max_attempts
        return attempt < limit
    return False


#: called with one line while a request is being retried, and with None once it is over
#: (answered or given up): the header says "retrying" before anything is stale
RetryReport = Callable[[str | None], None]


def with_retries(call: Callable[[], T], what: str, policy: RetryPolicy,
                 stop: threading.Event | None = None, report: RetryReport | None = None) -> T:
    """Run ``call`` (one idempotent request) until it succeeds or retrying cannot help.

    Args:
        call: makes the request; raises :class:`SourceError` subclasses on failure.
        what: the request, for the log ("GET /api/v1/nodes").
        policy: attempts, back-off and deadline.
        stop: set when the client closes; a pending wait ends and the last error is raised.
        report: told what is being retried, then None when the retries are over.
    """
    try:
        return _retry_loop(call, what, policy, stop, report)
    finally:
        if report is not None:
            report(None)


def _retry_loop(call: Callable[[], T], what: str, policy: RetryPolicy,
                stop: threading.Event | None, report: RetryReport | None) -> T:
    started = time.monotonic()
    attempt = 1
    while True:
        try:
            return call()
        except SourceError as error:
            retry_after = getattr(error, "retry_after", None)
            if not _retryable(error, attempt, policy):
                if attempt > 1:
                    log.warning("%s: giving up after %d attempts: %s", what, attempt, error)
                raise
            delay = policy.delay(attempt, retry_after)
            if time.monotonic() - started + delay > policy.deadline:
                log.warning("%s: giving up after %d attempts (%.0f s): %s", what, attempt,
                            time.monotonic() - started, error)
                raise
            how = f"Retry-After {retry_after:g} s" if retry_after is not None else "back-off"
            log.info("%s: attempt %d failed (%s); retrying in %.2f s (%s)", what, attempt,
                     error, delay, how)
            if report is not None:
                report(f"{_short(error)}; retrying ({how}, attempt {attempt + 1})")
            if stop is not None:
                if stop.wait(delay):
                    raise
            else:
                time.sleep(delay)
            attempt += 1


def _short(error: SourceError) -> str:
    """The first line of an error, at most 80 characters (it goes into the header)."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 80 else text[:79] + "…"


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds; the HTTP-date form and garbage count as absent."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


#: seconds before a request refused with 403 is tried again. RBAC changes are rare and a
#: refusal is not a passing fault: every 2 s forever was 1,260 refused scrapes in 3.5 min
FORBIDDEN_RETRY = 300.0


class ForbiddenGate:
    """After a 403, nothing more is asked until about :data:`FORBIDDEN_RETRY` seconds pass
    (jittered, so many clients do not come back in step); the refusal is kept as one line.

    Thread-safe: parallel scrapes share one gate, and the first refusal closes it for all.

    Args:
        what: what the line names, e.g. ``metrics: forbidden (pods/proxy)``.
        retry: seconds to wait after a refusal.
        clock: monotonic seconds (a test's fast clock).
    """

    def __init__(self, what: str, retry: float = FORBIDDEN_RETRY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.retry = retry
        self._clock = clock
        self._lock = threading.Lock()
        self._until = 0.0
        self._refused = False
        self._confirmed = False  # an answer other than 403 came since the last refusal

    def refused(self, error: ApiStatusError) -> None:
        """A 403: close the gate; the server's sentence goes to the debug log once."""
        with self._lock:
            first = not self._refused
            self._refused, self._confirmed = True, False
            self._until = self._clock() + self.retry * random.uniform(0.9, 1.1)
        if first:
            log.warning("%s: %s; asking again every %.0f s", self.what, error.detail,
                        self.retry)

    def answered(self) -> None:
        """A request got through (any answer but 403): the permission is there."""
        with self._lock:
            self._refused, self._confirmed = False, True

    def closed(self) -> bool:
        """True while a refusal is recent: send nothing."""
        with self._lock:
            return self._refused and self._clock() < self._until

    def probing(self) -> bool:
        """True when the permission is not known to be there (never answered, or refused
        before): one request should go first, alone, so a 403 costs one request, not N."""
        with self._lock:
            return not self._confirmed

    def message(self) -> str:
        """The line to show while refused ("" once allowed)."""
        with self._lock:
            if not self._refused:
                return ""
        minutes = f"{self.retry / 60:.0f} min" if self.retry >= 60 else f"{self.retry:.0f} s"
        return f"{self.what}; asking again every {minutes}"
