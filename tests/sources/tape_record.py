"""A headless recording session: the live source on a cluster, tapped by a TapeWriter.

What ``gputui --record`` does minus the screen: :func:`gputui.sources.tape.recorder.open_recorder`
taps a real :class:`KubeSource` (and a metrics feed when given). The tests use
:class:`Session` in-process; run as a script it records ``--demo``-style until killed and
prints ``tick N`` for every timeline event it handed over, so a test can ``kill -9`` it and
check what survived.

    python -m tests.sources.tape_record FILE SCENARIO SPEED
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import KubeTarget
from gputui.sources.tape.objects import objects_to_json
from gputui.sources.tape.recorder import open_recorder
from gputui.sources.tape.writer import TapeWriter


@dataclass
class Session:
    """A KubeSource on ``target`` recorded to ``path``; ``builds`` keeps, per build, the
    input as JSON and its ``now``, and ``snapshots`` what the live source delivered."""

    target: KubeTarget
    path: Path
    clock: Callable[[], float] = time.time
    keep: bool = True
    builds: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    snapshots: list[ClusterSnapshot] = field(default_factory=list)
    source: KubeSource | None = None
    writer: TapeWriter | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, **options: Any) -> Session:
        settings = {"coalesce": 0.05, "rebuild_every": 2.0, "xid_every": 0.5}
        settings.update(options)
        self.source = KubeSource(self.target, clock=self.clock, **settings)
        self.writer = open_recorder(replace(Settings(), record_file=str(self.path)),
                                    self.source, None)
        assert self.writer is not None
        if self.keep:
            record = self.source.on_built
            assert record is not None

            def built(objects: ClusterObjects, now: float) -> None:
                record(objects, now)
                with self._lock:  # the objects as the build saw them (the cache moves on)
                    self.builds.append((objects_to_json(objects), now))

            self.source.on_built = built
        self.source.start(self.snapshots.append, lambda _: None)
        return self

    def stop(self) -> None:
        if self.source is not None:
            self.source.stop()
        if self.writer is not None:
            self.writer.close(at=self.clock())

    def built(self) -> list[tuple[dict[str, Any], float]]:
        with self._lock:
            return list(self.builds)


def main(argv: list[str]) -> int:
    """Record SCENARIO at SPEED to FILE until killed; ``tick N`` per handed-over event."""
    from gputui.demo import DemoCluster

    path, scenario, speed = Path(argv[0]), argv[1], float(argv[2])
    demo = DemoCluster(scenario, speed=speed)
    session = Session(demo.start(), path, clock=demo.now, keep=False).start()
    assert session.writer is not None
    count = 0
    while True:
        session.writer.timeline([{"at": demo.now(), "n": count}])
        print(f"tick {count}", flush=True)
        count += 1
        time.sleep(0.1)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
