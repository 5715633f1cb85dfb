"""Benchmark: ``gputui replay`` on a 5,000-node recording: open, seek + build, step + build.

The recording is ``bench_record.py``'s (the same synthetic 5,000-node cluster in a rolling
driver upgrade, kubelet heartbeats, a crash loop, metrics every 2 s, one build per emulated
second, written by the real :class:`TapeWriter`). Then, as ``gputui replay FILE`` does it:

* open: :meth:`TapeReader.open` (the whole file read, parsed and checkpointed);
* first build: the snapshot at the start, a full build by a fresh builder;
* parking: three more warm builders built across the recording (what the replay does on its
  own thread once the first snapshot is on screen), with the memory they take;
* seek + build: :meth:`TapeSource.build_at` at random times, moving the warm builder with
  least to redo, given the nodes whose objects differ from its last build (what a ``t``
  jump or ``g``/``G`` costs the operator, from the key to the snapshot);
* step + build: ``right`` (the next change) from random places, then the build;

timings as min / median / max. Target: a seek well under 1 s. Asserts nothing.

    python benchmarks/bench_replay_seek.py [--nodes 5000] [--minutes 60] [--seeks 100]
                                           [--save FILE | --file FILE] [--one-builder]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_record import Cluster, record, spread

from gputui.domain.replay_cursor import ReplayCursor
from gputui.sources.changes import changed_nodes
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.source import TapeSource


def _rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def seek_figures(reader: TapeReader, seeks: int, park: bool = True) -> None:
    """Print open-to-first-snapshot, random seeks and steps (each with its build); with
    ``park``, warm builders are parked across the recording first, as a replay of a big
    cluster does once its first snapshot is on screen."""
    cursor = ReplayCursor(reader.change_times(), reader.start, reader.end,
                          monotonic=time.monotonic)
    source = TapeSource(reader, cursor)
    begin = time.perf_counter()
    first = source.build_at(reader.start)
    print(f"first build (full, {len(first.nodes)} nodes), s:  "
          f"{time.perf_counter() - begin:.2f}")
    if park:
        memory = _rss_mib()
        begin = time.perf_counter()
        source.park_builders().join()
        print(f"parking {len(source.pool.builders) - 1} more builders, s: "
              f"{time.perf_counter() - begin:.2f} (resident memory "
              f"+{_rss_mib() - memory:.0f} MiB)")
    rng = random.Random(7)
    jumps: list[float] = []
    changed: list[float] = []
    for _ in range(seeks):
        at = rng.uniform(reader.start, reader.end)
        before = source.pool.nearest(at).objects
        assert before is not None
        changed.append(len(changed_nodes(before, reader.objects_at(at))))
        begin = time.perf_counter()
        source.build_at(at)
        jumps.append((time.perf_counter() - begin) * 1000)
    print(f"seek + build at {seeks} random times, ms:   {spread(jumps)}")
    print(f"  nodes rebuilt per seek:                {spread(changed)}")
    steps: list[float] = []
    for _ in range(seeks):
        cursor.jump(rng.uniform(reader.start, reader.end))
        source.build_at(cursor.position)
        cursor.step(+1)
        begin = time.perf_counter()
        source.build_at(cursor.position)
        steps.append((time.perf_counter() - begin) * 1000)
    print(f"step (right) + build, {seeks} times, ms:     {spread(steps)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--seeks", type=int, default=100)
    parser.add_argument("--file", type=Path, help="replay this recording instead")
    parser.add_argument("--save", type=Path, help="write the recording here and keep it")
    parser.add_argument("--one-builder", action="store_true",
                        help="no parked builders: every jump moves the one builder")
    args = parser.parse_args()
    path = args.file
    if path is None:
        started = time.perf_counter()
        cluster = Cluster(args.nodes)
        path = args.save or Path(tempfile.mkdtemp(prefix="gputui-bench-")) / "hour.gputui-rec"
        record(cluster, path, args.minutes)
        print(f"recording: {args.nodes} nodes, {args.minutes} emulated minutes, "
              f"{path.stat().st_size / 1e6:.1f} MB ({time.perf_counter() - started:.0f} s "
              "to make)")
    opens: list[float] = []
    for _ in range(3):
        begin = time.perf_counter()
        reader = TapeReader.open(path)
        opens.append(time.perf_counter() - begin)
    print(f"open, s:                                 {spread(opens)}")
    seek_figures(reader, args.seeks, park=not args.one_builder)
    if args.file is None and args.save is None:
        path.unlink()


if __name__ == "__main__":
    main()
