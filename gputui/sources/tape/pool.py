"""Warm snapshot builders parked at different moments of a recording.

Why more than one: a builder moved from one moment to another rebuilds every node whose
objects changed in between, about 0.65 ms a node. Over an hour of a rolling upgrade of a
5,000-node cluster a far jump changed a median of 2,180 nodes (1.4 s), and all 5,000 when it
crossed a new driver DaemonSet generation (3.4 s): past the 1 s an operator waits for a
jump. With builders parked at the moments that split the recording's changes evenly, a jump
moves the one with least to redo (:meth:`TapeReader.rebuild_cost`), so no jump crosses
more than a slice of the changes.

The parked builders are made after the first snapshot is on screen, on a thread of their
own, and only for recordings whose first full build was slow (a small cluster's far jump
is fast already). Each is a fork of the one before (:meth:`SnapshotBuilder.fork`, tens of
milliseconds) moved on through the recording, so parking them all costs about one pass over
its changes instead of a full build each (2.5 s at 5,000 nodes): while it runs, it competes
with the operator's jumps for the interpreter. Forks share node views and the recording's
objects; each holds its own containers (about 17 MiB a builder at 5,000 nodes).

Headless: no textual.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gputui import gctuning
from gputui.domain.inputs import ClusterObjects
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.changes import changed_nodes

log = logging.getLogger(__name__)

#: a first full build slower than this (seconds) parks more builders
PARK_WHEN_SLOWER = 0.5
#: builders parked besides the one that starts at the beginning
PARKED = 7
#: seconds without a jump or step before the next builder is parked: parking competes with
#: the operator's jumps for the interpreter, so it waits for a pause in them
QUIET = 0.3


class Costed(Protocol):
    """What the pool reads of a recording (``TapeReader``)."""

    def objects_at(self, at: float) -> ClusterObjects: ...

    def rebuild_cost(self, first: float, second: float) -> int: ...

    def change_quantile(self, share: float) -> float: ...


@dataclass(eq=False)
class WarmBuilder:
    """A builder and the objects and time of its last build (None: it has not built)."""

    builder: SnapshotBuilder
    objects: ClusterObjects | None = None
    at: float = 0.0


def parking_times(tape: Costed, count: int = PARKED) -> list[float]:
    """Where ``count`` builders go, with one more at the start: at the shares 2/(2n+1),
    4/(2n+1), ... of the recording's changes, so that no moment is more than 1/(2n+1) of
    them away from a builder. In time order: each is a fork of the one before, moved on."""
    slices = 2 * count + 1
    return sorted({tape.change_quantile(2 * k / slices) for k in range(1, count + 1)})


@dataclass(eq=False)
class BuilderPool:
    """The warm builders of one replay; the source moves one of them per build.

    Guarded by the caller's lock, except :meth:`park_in_background`'s thread, which builds
    its own builders unguarded and adds each under that lock.
    """

    tape: Costed
    #: the builder of the first snapshot; parked ones are forks of it
    first: SnapshotBuilder
    lock: threading.Lock
    builders: list[WarmBuilder] = field(default_factory=list)
    #: seconds of quiet parking waits for (:data:`QUIET`)
    quiet: float = QUIET
    #: when the source last built (``time.monotonic``; it sets this after each build)
    last_used: float = 0.0

    def __post_init__(self) -> None:
        if not self.builders:
            self.builders.append(WarmBuilder(self.first))

    def nearest(self, at: float) -> WarmBuilder:
        """The builder with least to rebuild to reach ``at`` (one that never built only
        when none has)."""
        built = [warm for warm in self.builders if warm.objects is not None]
        if not built:
            return self.builders[0]
        return min(built, key=lambda warm: self.tape.rebuild_cost(warm.at, at))

    def park_in_background(self, times: Sequence[float],
                           stop: threading.Event) -> threading.Thread:
        """Park a builder at each of ``times`` (ascending) on a daemon thread, adding each
        as it is ready; ``stop`` ends it between two."""
        thread = threading.Thread(target=self._park, args=(sorted(times), stop),
                                  name="gputui-replay-park", daemon=True)
        thread.start()
        return thread

    def _park(self, times: list[float], stop: threading.Event) -> None:
        """A fork of the first builder, moved to the first time and parked there; a fork of
        that one moved on to the next, and so on: the whole walk costs about one pass over
        the recording's changes, not a full build per builder."""
        with self.lock:
            first = self.builders[0]
            if first.objects is None:
                return  # nothing built yet: nothing to fork
            walker = WarmBuilder(first.builder.fork(), first.objects, first.at)
        for at in times:
            self._wait_for_quiet(stop)
            if stop.is_set():
                return
            try:
                objects = self.tape.objects_at(at)
                assert walker.objects is not None
                changes = changed_nodes(walker.objects, objects)
                # frozen once built: a parked builder's views live on, and a full
                # collection walking 5,000 nodes' of them paused a jump for 1.5 s
                with gctuning.paused(freeze_after=True):
                    walker.builder.build(objects, at, changed_nodes=changes)
                    parked = walker
                    walker = WarmBuilder(parked.builder.fork(), objects, at)
            except Exception:  # broad: a builder that cannot be parked only makes jumps
                log.exception("replay: parking a builder at %s failed", at)  # slower
                return
            parked.objects, parked.at = objects, at
            with self.lock:
                self.builders.append(parked)

    def _wait_for_quiet(self, stop: threading.Event) -> None:
        """Until no build runs and none ran for :attr:`quiet` seconds (or ``stop``)."""
        while not stop.is_set():
            waited = time.monotonic() - self.last_used
            if waited >= self.quiet and not self.lock.locked():
                return
            stop.wait(min(max(self.quiet - waited, 0.02), self.quiet))
