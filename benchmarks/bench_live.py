#!/usr/bin/env python3
"""How the live source keeps up at 5,000 GPU nodes: first snapshot, then a stream of writes.

Steps:
1. Start the emulated ``scale-5000`` cluster in this process and open the live source on it
   (``open_source`` with a kubeconfig, exactly the TUI's path); time until the first
   snapshot and print the peak RSS (of the whole process: it includes the emulated cluster).
2. Stop the emulated operator's controllers (``--keep-operator`` leaves them on: they react
   to every node write with cluster-wide passes, and in this one process they would take
   the GIL from the source being measured), then write ``--rate`` node label updates per
   second for ``--seconds`` through the emulator's store (round robin over the nodes, each
   write stamping a sequence number in a label). The API server keeps serving the watches.
   Before the writes, ``--idle`` seconds without any change are measured too.
3. Print the snapshots delivered while writing, the latency from each write to the first
   snapshot whose node view carries it (median and p99), writes never seen, and the CPU the
   source's own threads used (``gputui-*`` threads, the emulated cluster's excluded) as a
   percentage of one core over the write window, plus how many builds were full.

A script that prints figures, not a test: ``python benchmarks/bench_live.py``.
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source

LABEL = "gputui.bench/seq"
_TICK = os.sysconf("SC_CLK_TCK")


def _thread_cpu(tid: int | None) -> float:
    try:
        fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def source_threads() -> dict[str, float]:
    """CPU seconds used so far by each of the live source's threads (not the emulator's)."""
    return {t.name: _thread_cpu(t.native_id) for t in threading.enumerate()
            if t.name.startswith("gputui-") and t.name != "gputui-sim"}


def source_cpu() -> float:
    """CPU seconds used so far by the live source's threads together."""
    return sum(source_threads().values())


def sim_cpu() -> float:
    """CPU seconds used so far by the emulated cluster's thread (API server, controllers)."""
    return sum(_thread_cpu(t.native_id) for t in threading.enumerate() if t.name == "gputui-sim")


class CountingBuilder:
    """The domain builder, counting full builds (``changed_nodes=None``) and build CPU."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.full = 0
        self.builds = 0
        self.cpu = 0.0

    def build(self, objects: Any, now: float, changed_nodes: Any = None) -> Any:
        self.builds += 1
        self.full += changed_nodes is None
        began = time.thread_time()
        try:
            return self.inner.build(objects, now, changed_nodes=changed_nodes)
        finally:
            self.cpu += time.thread_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--rate", type=int, default=1000, help="node writes per second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--idle", type=float, default=10.0,
                        help="seconds measured with no writes before the stream")
    parser.add_argument("--keep-operator", action="store_true",
                        help="leave the emulated operator running while writing (it reacts "
                             "to every node write with cluster-wide passes and, in this one "
                             "process, takes the GIL from the source being measured)")
    args = parser.parse_args()

    from gputui.domain.snapshot import SnapshotBuilder

    began = time.perf_counter()
    cluster = EmulatedCluster(args.scenario, speed=args.speed).start(timeout=600)
    print(f"emulated cluster up in {time.perf_counter() - began:.1f} s")
    workdir = Path(tempfile.mkdtemp(prefix="bench-live-"))
    kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
    builder = CountingBuilder(SnapshotBuilder())
    source = open_source(Settings(kubeconfig=str(kubeconfig)), builder=builder)
    delivered: queue.Queue[tuple[float, Any]] = queue.Queue()
    first, complete = threading.Event(), threading.Event()
    stamps: dict[str, float] = {}

    def on_snapshot(snapshot: Any) -> None:
        delivered.put((time.perf_counter(), snapshot))
        stamps.setdefault("first", time.perf_counter())
        first.set()
        if not snapshot.loading:  # nodes come first, pipelines once the pods are listed
            stamps.setdefault("complete", time.perf_counter())
            complete.set()

    began = time.perf_counter()
    source.start(on_snapshot, lambda _status: None)
    if not complete.wait(600):
        raise SystemExit("no complete snapshot in 600 s")
    print(f"time to first snapshot (nodes): {stamps['first'] - began:.1f} s; to the complete "
          f"one: {stamps['complete'] - began:.1f} s, {len(source.snapshot.nodes)} nodes")
    print(f"peak RSS after first snapshot: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (with the sim)")
    if not args.keep_operator:
        cluster.call(cluster.operator.stop(), timeout=60)  # the API server keeps serving
    time.sleep(2.0)  # let the post-sync work (XID reader) start before measuring
    while not delivered.empty():
        delivered.get()
    try:
        measure_idle(builder, args.idle)
        writes, cpu, wall, full_before = stream_writes(cluster, source, builder, args)
        report(writes, delivered, cpu, wall, builder.full - full_before)
    finally:
        source.stop()
        cluster.stop()


def measure_idle(builder: CountingBuilder, seconds: float) -> None:
    """What the source costs when nothing changes (ages and thresholds still move on)."""
    if seconds <= 0:
        return
    cpu0, builds0, full0 = source_cpu(), builder.builds, builder.full
    time.sleep(seconds)
    cpu = source_cpu() - cpu0
    print(f"idle {seconds:.0f} s: source threads CPU {cpu:.2f} s = {100 * cpu / seconds:.0f}% "
          f"of one core; {builder.builds - builds0} builds, {builder.full - full0} full")


def stream_writes(cluster: EmulatedCluster, source: Any, builder: CountingBuilder,
                  args: argparse.Namespace) -> tuple[list[tuple[int, str, float]], float,
                                                     float, int]:
    """Paced label writes; returns (seq, node, perf time) per write and the source's CPU."""
    names = sorted(source.snapshot.nodes)
    writes: list[tuple[int, str, float]] = []
    total = int(args.rate * args.seconds)
    full_before, build_cpu = builder.full, builder.cpu
    threads0 = source_threads()
    cpu0, sim0, proc0, wall0 = source_cpu(), sim_cpu(), time.process_time(), time.perf_counter()
    for seq in range(total):
        due = wall0 + seq / args.rate
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        name = names[seq % len(names)]
        value = str(seq)
        cluster.store.mutate("nodes", name, None,
                             lambda n, v=value: n["metadata"]["labels"].__setitem__(LABEL, v),
                             manager="bench")
        writes.append((seq, name, time.perf_counter()))
    wall = time.perf_counter() - wall0
    cpu = source_cpu() - cpu0
    busy = {name: spent - threads0.get(name, 0.0) for name, spent in source_threads().items()}
    print("source threads: " + ", ".join(f"{name} {spent:.2f} s" for name, spent in
                                         sorted(busy.items(), key=lambda kv: -kv[1])[:4]))
    print(f"domain builder CPU while writing: {builder.cpu - build_cpu:.2f} s "
          f"in {builder.builds} builds so far")
    print(f"CPU while writing: emulated cluster {sim_cpu() - sim0:.2f} s, whole process "
          f"{time.process_time() - proc0:.2f} s (2 cores shared with everything else)")
    settle_until(source, writes[-1][1], str(writes[-1][0]), 60.0)
    return writes, cpu, wall, full_before


def settle_until(source: Any, node: str, value: str, timeout: float) -> None:
    """Wait (bounded) until the newest snapshot carries the last write."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = source.snapshot.nodes.get(node) if source.snapshot is not None else None
        if view is not None and view.labels.get(LABEL) == value:
            time.sleep(0.5)  # its delivery reaches the queue
            return
        time.sleep(0.1)


def report(writes: list[tuple[int, str, float]], delivered: queue.Queue[tuple[float, Any]],
           cpu: float, wall: float, full: int) -> None:
    """Match each write to the first snapshot that carries it."""
    snapshots: list[tuple[float, Any]] = []
    while not delivered.empty():
        snapshots.append(delivered.get())
    pending = list(writes)
    latencies: list[float] = []
    for at, snapshot in snapshots:
        still = []
        for seq, name, written in pending:
            view = snapshot.nodes.get(name)
            seen = view.labels.get(LABEL) if view is not None else None
            if written < at and seen is not None and int(seen) >= seq:
                latencies.append(at - written)
            else:
                still.append((seq, name, written))
        pending = still
    in_window = sum(1 for at, _ in snapshots if at <= writes[-1][2])
    latencies.sort()
    print(f"writes: {len(writes)} in {wall:.1f} s; snapshots delivered: {in_window} "
          f"while writing, {len(snapshots)} in all; full builds while writing: {full}")
    if latencies:
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"write->snapshot latency: median {statistics.median(latencies) * 1000:.0f} ms, "
              f"p99 {p99 * 1000:.0f} ms; never seen: {len(pending)}")
    print(f"source threads CPU: {cpu:.2f} s over {wall:.1f} s = {100 * cpu / wall:.0f}% "
          f"of one core")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
