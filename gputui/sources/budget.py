"""How long the request about to be sent may take: a per-thread budget set by an action.

Why per thread: an action's writes are bounded by the time its own deadline leaves (a drain
with 5 s left sends its eviction with a socket timeout of at most 5 s), yet the writer is
shared by every action and the dry run. The action's guard sets the budget in the thread
that sends the request; :func:`bounded` reads it when the request is made.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the shortest socket timeout ever given (a budget of 0 would mean "no timeout" to urllib3)
FLOOR = 0.1

_LOCAL = threading.local()


@contextmanager
def request_budget(seconds: float | None) -> Iterator[None]:
    """Requests made by this thread inside the block take at most ``seconds`` each."""
    previous = getattr(_LOCAL, "seconds", None)
    _LOCAL.seconds = seconds
    try:
        yield
    finally:
        _LOCAL.seconds = previous


def bounded(timeout: tuple[float, float]) -> tuple[float, float]:
    """``(connect, read)`` timeouts, each cut to this thread's budget when one is set."""
    seconds: float | None = getattr(_LOCAL, "seconds", None)
    if seconds is None:
        return timeout
    cap = max(FLOOR, seconds)
    return min(timeout[0], cap), min(timeout[1], cap)
