"""Benchmark: ``gputui replay`` on a 5,000-node recording: open, seek + build, step + build.

The recording is ``bench_record.py``'s (the same synthetic 5,000-node cluster in a rolling
driver upgrade, kubelet heartbeats, a crash loop, metrics every 2 s, one build per emulated
second, written by the real :class:`TapeWriter`). Then, as ``gputui replay FILE`` does it:

* open: :meth:`TapeReader.open` (the whole file read, parsed and checkpointed);
* first build: the snapshot at the start, a full build by a fresh builder;
* seek + build: :meth:`TapeSource.build_at` at random times, with the one warm builder
  given the nodes whose objects differ from the last build (what a ``t`` jump or ``g``/``G``
  costs the operator, from the key to the snapshot);
* step + build: ``right`` (the next change) from random places, then the build;

timings as min / median / max. Target: a seek well under 1 s. Asserts nothing.

    python benchmarks/bench_replay_seek.py [--nodes 5000] [--minutes 60] [--seeks 100]
                                           [--save FILE | --file FILE]
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
from gputui.sources.replay_source import TapeSource, changed_nodes
from gputui.sources.tape_reader import TapeReader


def seek_figures(reader: TapeReader, seeks: int) -> None:
    """Print open-to-first-snapshot, random seeks and steps (each with its build)."""
    cursor = ReplayCursor(reader.change_times(), reader.start, reader.end,
                          monotonic=time.monotonic)
    source = TapeSource(reader, cursor)
    begin = time.perf_counter()
    first = source.build_at(reader.start)
    print(f"first build (full, {len(first.nodes)} nodes), s:  "
          f"{time.perf_counter() - begin:.2f}")
    rng = random.Random(7)
    jumps: list[float] = []
    changed: list[float] = []
    for _ in range(seeks):
        at = rng.uniform(reader.start, reader.end)
        before = reader.objects_at(source.built_at)
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
    seek_figures(reader, args.seeks)
    if args.file is None and args.save is None:
        path.unlink()


if __name__ == "__main__":
    main()
