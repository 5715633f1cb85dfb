"""``Foreground``: the screen's claim on the interpreter, heeded by the source's threads.

Why: Python runs one thread at a time. While a big cluster's lists load, the source's
decoder and builder threads hold the interpreter most of the time, so the UI gets a
fraction of it: at 5,000 nodes on two cores, importing the UI took 4.5 s instead of 1.2 s,
the first rows waited behind 40,000 pods being decoded, and a view typed at the first rows
waited behind the same pages. So the screen says what it needs, and the source's threads,
between two pages, give it the interpreter:

* until the screen is there, a snapshot of half the node list is built for nobody (only
  the newest is handed over when it comes): partial builds wait for :meth:`listening`;
* the lists other than the GPU nodes are decoded once the screen has painted the whole
  node list (:meth:`shown`), not merely once it was built;
* for a moment after each key (:meth:`claim`), list pages wait: the answer to a key is
  drawn first. Builds and watch events do not: a snapshot held back while an operator
  types would show a cordon late, and a plan made from it would be wrong.

Every wait is bounded, and a source nobody watches (``check``, tests without a screen:
:meth:`expect_screen` never called) waits for nothing, so a screen that never says a word
cannot stall the data.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection

#: the feed whose list is enough for a first (partial) snapshot, the GPU nodes: the screen
#: shows its rows first, everything else waits for it
FIRST_FEED = "nodes"
#: seconds a key's claim lasts (renewed by every key): ``:upgrades`` and its first frame
#: take ~0.4 s of interpreter at 5,000 nodes alone, 0.6-0.8 s beside the load's other
#: work (typed at the first rows, 4 launches each: 0.62-1.29 s to show with a 0.5 s
#: claim, 0.60-0.78 s with 1 s)
KEY_CLAIM = 1.0
#: seconds one page waits at most for the keys' claims to end
TURN_LIMIT = 1.0
#: seconds the other lists wait at most for the screen to paint the node list
SHOWN_LIMIT = 10.0


class Foreground:
    """What the screen needs now, told from the UI thread to the source's threads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._claimed = threading.Condition(self._lock)
        self._until = 0.0
        self._expect = False
        self._listening = threading.Event()
        self._nodes_shown = threading.Event()
        self._on_listening: list[Callable[[], None]] = []

    # ------------------------------------------------------------ the screen's side
    def expect_screen(self) -> None:
        """A screen will show this source: heed it (called before the source starts)."""
        with self._lock:
            self._expect = True

    def listening(self) -> None:
        """The screen is up and shows what it is handed from now on."""
        if self._listening.is_set():
            return
        self._listening.set()
        with self._lock:
            callbacks, self._on_listening = self._on_listening, []
        for callback in callbacks:
            callback()

    def shown(self, loading: Collection[str]) -> None:
        """A snapshot was painted; ``loading``: the lists it had not read yet."""
        if FIRST_FEED not in loading:
            self._nodes_shown.set()

    def claim(self, seconds: float = KEY_CLAIM) -> None:
        """A key: the source's threads wait at their next page for ``seconds``."""
        with self._claimed:
            self._until = max(self._until, self._clock() + seconds)

    def release(self) -> None:
        """Give up any claim (the app is closing; a claim must not outlive it)."""
        with self._claimed:
            self._until = 0.0
            self._claimed.notify_all()
        self._listening.set()
        self._nodes_shown.set()

    # ------------------------------------------------------------ the source's side
    @property
    def expected(self) -> bool:
        with self._lock:
            return self._expect

    def building_for_nobody(self) -> bool:
        """A screen is expected but not up yet: a partial snapshot would be thrown away."""
        return self.expected and not self._listening.is_set()

    def when_listening(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from the UI thread) once the screen listens; now if it does."""
        with self._lock:
            if not self._listening.is_set():
                self._on_listening.append(callback)
                return
        callback()

    def skip_shown(self) -> None:
        """There are no node rows to paint (the node list is refused, absent, failing)."""
        self._nodes_shown.set()

    def wait_nodes_shown(self, limit: float = SHOWN_LIMIT) -> bool:
        """Block until the node list is painted (at once without a screen); False when
        ``limit`` passed first, and then no later call waits."""
        if not self.expected or self._nodes_shown.wait(limit):
            return True
        self._nodes_shown.set()
        return False

    def wait_turn(self, limit: float = TURN_LIMIT) -> float:
        """Block while a key's claim lasts, ``limit`` seconds at most (a key held down
        renews its claim for as long as it repeats: a page still goes through each
        ``limit``); returns the seconds waited."""
        began: float | None = None
        with self._claimed:
            while True:
                now = self._clock()
                began = now if began is None else began
                left = min(self._until, began + limit) - now
                if left <= 0:
                    return now - began
                self._claimed.wait(left)
