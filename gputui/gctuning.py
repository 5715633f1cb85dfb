"""Garbage-collector tuning: the one place where gputui pauses, freezes or spaces collections.

The rule: what gputui allocates in bulk (decoded JSON lists, the object cache, snapshots,
table rows, the emulator's objects) is acyclic and mostly long-lived, so cyclic collections
over it are wasted work that grows with the heap. Hence three moves, and only these:

1. **Pause** (:func:`paused`, :class:`BoundedPause`) while a burst of such objects is
   allocated, never for an unbounded time: reference counting still frees what dies.
2. **Freeze** (:func:`freeze`) what the burst left alive once it is over: ``gc.freeze`` moves
   it to the permanent generation, so later collections do not walk it again.
3. **Space full collections** (:class:`BigHeap`) once a big cluster is on screen, and put the
   thresholds back when the app exits.

Who calls what, and why (each measured; the numbers stay with the callers' reasons):
``sources.oneshot`` pauses while lists are decoded, ``sources.kube`` pauses until the first
snapshot, the recording reader pauses while it reads a file and freezes what it read,
the snapshot builder's callers pause around builds (the domain is pure and does not
touch the collector itself), the emulator pauses while it sets a cluster up, and the app
freezes and spaces collections once a big cluster is loaded. Nothing else imports ``gc``
(``tests/meta/test_gctuning.py`` checks).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: node count from which a loaded cluster is frozen out of GC scans (see :class:`BigHeap`)
FREEZE_HEAP_AT_NODES = 500
#: gen-1 collections between two full collections once a big cluster is loaded (default 10)
FULL_COLLECTION_THRESHOLD = 100


@contextmanager
def paused(freeze_after: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block; the collector's previous state after it.

    Args:
        freeze_after: freeze what exists when the block ends (its objects live on), before
            the collector resumes: what follows need not walk them again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze_after:
            gc.freeze()
        if enabled:
            gc.enable()


def freeze() -> None:
    """Move every object that exists now out of the collector's sight (it lives on)."""
    gc.freeze()


class BoundedPause:
    """A pause that spans threads and callbacks (no ``with`` block fits), ended by whoever
    comes first: the awaited event (:meth:`end`) or the bound (:meth:`end_if_longer_than`),
    so a wait that never ends does not leave the process without a collector."""

    def __init__(self) -> None:
        self._since: float | None = None

    def begin(self) -> None:
        """Pause now, unless the collector is already off (then someone else owns it)."""
        if gc.isenabled():
            self._since = time.monotonic()
            gc.disable()

    def end(self, freeze_first: bool) -> None:
        """Resume the collector if this pause holds it; ``freeze_first`` freezes what exists."""
        if self._since is not None:
            self._since = None
            if freeze_first:
                gc.freeze()
            gc.enable()

    def end_if_longer_than(self, limit: float) -> None:
        """Resume (no freeze) when the pause has lasted more than ``limit`` seconds."""
        since = self._since
        if since is not None and time.monotonic() - since > limit:
            self.end(freeze_first=False)


class BigHeap:
    """Freezes a big cluster's heap as it loads and spaces full collections meanwhile.

    Why freeze: at 5,000 nodes the cache, the snapshot and the table hold millions of
    objects; every full (gen 2) collection then walks them all and freezes the screen for
    200-400 ms, which is what an operator feels as a dropped key press. What was loaded at
    start is long-lived anyway; later collections only scan newer objects.

    Why space: the frozen heap is skipped, but under 1,000 node changes a second the renders
    and patches still promote enough objects that a full collection ran about once a second
    and paused the screen 30-60 ms each time (bench_tui's worst keys). Young generations are
    untouched, so short-lived garbage goes as before; cycles that reach the old generation
    wait longer. :meth:`release` puts the previous thresholds back (tests run many apps in
    one process).
    """

    def __init__(self, at_nodes: int = FREEZE_HEAP_AT_NODES) -> None:
        self.at_nodes = at_nodes
        self._frozen_at_nodes = 0
        self._thresholds: tuple[int, int, int] | None = None

    def loaded(self, nodes: int) -> bool:
        """A snapshot of ``nodes`` is about to be shown: freeze when the cluster is big and
        has at least doubled since the last freeze; True when it froze (the caller freezes
        once more after the first fill, for the rows it built)."""
        if nodes >= self.at_nodes and nodes >= 2 * self._frozen_at_nodes:
            self._frozen_at_nodes = nodes
            gc.freeze()
            self._space_full_collections()
            return True
        return False

    def _space_full_collections(self) -> None:
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            young, middle, old = self._thresholds
            gc.set_threshold(young, middle, max(old, FULL_COLLECTION_THRESHOLD))

    def release(self) -> None:
        """Put the thresholds back as they were before :meth:`loaded` spaced them."""
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
