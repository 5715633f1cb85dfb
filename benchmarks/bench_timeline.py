#!/usr/bin/env python3
"""The timeline's cost per snapshot at 5,000 GPU nodes.

Builds a 5,000-node cluster (the domain tests' factory objects) with one builder, then
``--rounds`` incremental builds that each change ``--changed`` nodes (cordon one, crash one's
driver...), and times :func:`gputui.domain.timeline.derive_events` on each consecutive pair
(the unchanged nodes are skipped by identity). Prints p50 and max in milliseconds and the
events found; run it three times and compare the spread.

A script that prints figures, not a test: ``python benchmarks/bench_timeline.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gputui import gctuning
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.timeline import derive_events
from tests.domain import factory as f


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    names = [f"gpu-{i:05d}" for i in range(args.nodes)]
    nodes = {n: f.node(n) for n in names}
    pods = [p for n in names for p in f.healthy_pods(n)]
    builder = SnapshotBuilder()
    with gctuning.paused():
        prev = builder.build(f.objects(list(nodes.values()), pods), f.T0)
    times, found = [], 0
    for round_ in range(args.rounds):
        changed = names[round_ * args.changed:(round_ + 1) * args.changed]
        for name in changed:
            nodes[name] = f.node(name, cordoned=round_ % 2 == 0)
        with gctuning.paused():
            snap = builder.build(f.objects(list(nodes.values()), pods), f.T0 + round_,
                                 changed_nodes=changed)
        start = time.perf_counter()
        events = derive_events(prev, snap, f.T0 + round_)
        times.append((time.perf_counter() - start) * 1000)
        found += len(events)
        prev = snap
    print(f"{args.nodes} nodes, {args.changed} changed per snapshot, {args.rounds} rounds: "
          f"derive_events p50 {statistics.median(times):.2f} ms, max {max(times):.2f} ms, "
          f"{found} events")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
