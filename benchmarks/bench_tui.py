#!/usr/bin/env python3
"""How the TUI holds up at 5,000 GPU nodes: table fill time, memory, key latency under load.

Steps:
1. Start the emulated ``scale-5000`` cluster, read it once through the one-shot reader and
   build the domain snapshot (the raw objects are cached in ``--cache`` so reruns skip the
   emulated cluster). This part is the sources' and domain's cost and is printed apart.
2. Run the app headless (``make_app`` + ``run_test``) on a replay source, deliver the
   snapshot and time until the node table holds every node and the screen is idle.
3. Stream node updates from a background thread (``--rate`` node changes per second, in
   batches of ``--batch``: new ``NodeView`` objects for the changed nodes, the same objects
   for the rest, exactly like the domain builder) and press ``down``/``up`` ``--keys`` times,
   timing each press until the app is idle again (key to screen).
4. Print the figures. Peak memory is the process's max RSS (``ru_maxrss``); it is reached
   while the raw cluster objects are read and built into the snapshot, before the app
   exists. The UI's own share is printed apart: the growth of the current RSS from just
   before the app starts (raw objects dropped, snapshot kept) to after the fill and stream.

A script that prints figures, not a test: ``python benchmarks/bench_tui.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import copyreg
import dataclasses
import gc
import pickle
import resource
import statistics
import sys
import threading
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from textual import events

from gputui.session import session_of
from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.domain.snapshot import SnapshotBuilder
from gputui.settings import Settings
from gputui.ui.app import make_app
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures.recordings import ReplaySource


def rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mib() -> float:
    """Current resident set size of this process in MiB (Linux ``/proc``; 0 elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * resource.getpagesize() / 2**20


def _proxy(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


# pickled by the name ``bench_tui._proxy`` even when this file runs as ``__main__``, so
# the other benchmarks (which import this module) can read the cache it writes
_proxy.__module__ = "bench_tui"
sys.modules.setdefault("bench_tui", sys.modules[__name__])


def _reduce_proxy(proxy: MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    """Pickle a read-only mapping as the mapping it wraps (``ClusterObjects`` holds some;
    pickle refuses ``mappingproxy`` and the cache could not be written)."""
    return _proxy, (dict(proxy),)


copyreg.pickle(MappingProxyType, _reduce_proxy)


def read_scale(scenario: str, cache: Path) -> tuple[ClusterObjects, float]:
    """The scenario's raw objects and emulated now, from the cache or the emulated cluster."""
    if cache.exists():
        main = sys.modules["__main__"]
        if not hasattr(main, "_proxy"):  # a cache written before the fix above names it so
            main._proxy = _proxy  # type: ignore[attr-defined]
        with cache.open("rb") as handle:
            objects, now = pickle.load(handle)
        try:  # a cache written before ClusterObjects changed is read again
            objects = dataclasses.replace(objects)
        except (AttributeError, TypeError):
            print(f"cache {cache} is from an older gputui: reading the cluster again")
        else:
            print(f"objects from cache {cache}")
            return objects, now
    from gputui.demo import DemoCluster

    from gputui.sources.oneshot import read_objects

    started = time.perf_counter()
    demo = DemoCluster(scenario)
    target = demo.start()
    try:
        print(f"emulated cluster started       {time.perf_counter() - started:7.1f} s")
        started = time.perf_counter()
        objects = read_objects(target)
        now = demo.now()
        print(f"one-shot read ({len(objects.nodes)} nodes)    {time.perf_counter() - started:7.1f} s")
    finally:
        demo.stop()
    partial = cache.with_name(cache.name + ".partial")  # a failed write leaves no cache
    with partial.open("wb") as handle:
        pickle.dump((objects, now), handle)
    partial.replace(cache)
    return objects, now


def updated(snapshot: ClusterSnapshot, names: list[str], tick: int) -> ClusterSnapshot:
    """``snapshot`` with new views for ``names`` (cordon flips, upgrade state moves)."""
    nodes = dict(snapshot.nodes)
    state = ("upgrade-required", "cordon-required", "wait-for-jobs-required",
             "upgrade-done")[tick % 4]
    for name in names:
        view: NodeView = nodes[name]
        nodes[name] = replace(view, cordoned=not view.cordoned, upgrade_state=state)
    return replace(snapshot, nodes=MappingProxyType(nodes), generated_at=snapshot.generated_at + tick)


class Streamer(threading.Thread):
    """Pushes updated snapshots at ``rate`` node changes per second until stopped."""

    def __init__(self, source: ReplaySource, base: ClusterSnapshot, rate: int, batch: int):
        super().__init__(daemon=True, name="bench-stream")
        self.source, self.snapshot = source, base
        self.rate, self.batch = rate, batch
        self.names = sorted(base.nodes)
        self.stop_event = threading.Event()
        self.sent = 0

    def run(self) -> None:
        interval = self.batch / self.rate
        tick = 0
        while not self.stop_event.is_set():
            started = time.perf_counter()
            start = (tick * self.batch * 7) % len(self.names)
            names = (self.names + self.names)[start:start + self.batch]
            self.snapshot = updated(self.snapshot, names, tick)
            self.source.push(self.snapshot)
            self.sent += len(names)
            tick += 1
            self.stop_event.wait(max(0.0, interval - (time.perf_counter() - started)))


class FrameClock:
    """Timestamps every frame the app renders (headless apps render, then skip the write)."""

    def __init__(self, app: Any) -> None:
        self.last = 0.0
        display = app._display

        def timed(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                self.last = time.perf_counter()
            display(screen, renderable)
        app._display = timed


async def key_to_frame(app: Any, table: NodeTable, key: str, timeout: float = 10.0) -> float:
    """Seconds from a key event entering the app to the first frame showing its effect."""
    frames: FrameClock = app.bench_frames
    before = table.cursor_row
    began = time.perf_counter()
    app.post_message(events.Key(key, None))
    deadline = began + timeout
    while table.cursor_row == before and time.perf_counter() < deadline:
        await asyncio.sleep(0.0005)
    moved = time.perf_counter()
    while frames.last < moved and time.perf_counter() < deadline:
        await asyncio.sleep(0.0005)
    return frames.last - began


async def first_rows_painted(app: Any, table: NodeTable, started: float,
                             timeout: float = 60.0) -> float:
    """Seconds from ``started`` to the first frame painted after the table got rows."""
    frames: FrameClock = app.bench_frames
    deadline = started + timeout
    while not table.row_count and time.perf_counter() < deadline:
        await asyncio.sleep(0.0005)
    filled = time.perf_counter()
    while frames.last < filled and time.perf_counter() < deadline:
        await asyncio.sleep(0.0005)
    return frames.last - started


async def drive(snapshot: ClusterSnapshot, args: argparse.Namespace) -> None:
    """Fill the table, then measure key latency while updates stream in."""
    if args.trace:
        tracemalloc.start()
    source = ReplaySource([], last_update=snapshot.generated_at)
    app = make_app(Settings(), session_of(Settings(), source, clock=lambda: snapshot.generated_at))
    async with app.run_test(size=(160, 48)) as pilot:
        app.bench_frames = FrameClock(app)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(NodeTable)
        started = time.perf_counter()
        source.push(snapshot)
        first = await first_rows_painted(app, table, started)
        print(f"first rows on screen           {first:7.2f} s   (a screenful, before the rest)")
        while table.row_count < len(snapshot.nodes):
            await pilot.pause(0.01)
        await pilot.pause()
        fill = time.perf_counter() - started
        print(f"node table complete ({table.row_count} rows)   {fill:7.2f} s   (target < 2 s)")
        print(f"peak RSS after fill            {rss_mib():7.0f} MiB")
        print(f"UI share after fill            {rss_now_mib() - args.rss_base:7.0f} MiB   "
              f"(current RSS growth since the app started)")
        if args.trace:
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"UI memory (tracemalloc)        {current / 2**20:7.0f} MiB now, "
                  f"{peak / 2**20:.0f} MiB peak (fill time above is slowed by tracing)")
        streamer = Streamer(source, snapshot, args.rate, args.batch)
        streamer.start()
        await pilot.pause(0.5)
        latencies = []
        applied_before = app.pace.applied
        stream_started = time.perf_counter()
        for index in range(args.keys):
            key = "down" if (index // 20) % 2 == 0 else "up"
            latencies.append(await key_to_frame(app, table, key) * 1000)
            await asyncio.sleep(args.gap)
        elapsed = time.perf_counter() - stream_started
        streamer.stop_event.set()
        streamer.join()
        applied = app.pace.applied - applied_before
        await pilot.pause()
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"updates streamed               {streamer.sent / elapsed:7.0f} node changes/s "
          f"({applied} snapshots applied of {streamer.sent // args.batch} sent: coalesced)")
    print(f"key latency p50 / p99          {p50:7.1f} / {p99:.1f} ms   (target p99 < 50 ms)")
    print(f"peak RSS                       {rss_mib():7.0f} MiB   (target < 300 MB; the peak "
          f"is the raw objects' read, before the app)")
    print(f"UI share after the stream      {rss_now_mib() - args.rss_base:7.0f} MiB   "
          f"(current RSS {rss_now_mib():.0f} MiB, {args.rss_base:.0f} MiB before the app)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/gputui-bench-scale-5000.pickle"))
    parser.add_argument("--rate", type=int, default=1000, help="node changes per second")
    parser.add_argument("--batch", type=int, default=100, help="node changes per snapshot")
    parser.add_argument("--keys", type=int, default=200, help="key presses to time")
    parser.add_argument("--trace", action="store_true",
                        help="measure the UI's own allocations during the fill (tracemalloc)")
    parser.add_argument("--gap", type=float, default=0.02, help="seconds between key presses")
    parser.add_argument("--kubeconfig", help="read the cluster from this server instead of "
                                             "starting the emulated one")
    args = parser.parse_args()
    if args.kubeconfig:  # e.g. benchmarks/frozen_server.py serving scale-15000
        from gputui.sources.kubeconfig import load_target
        from gputui.sources.oneshot import read_objects

        objects, now = read_objects(load_target(args.kubeconfig)), time.time()
    else:
        objects, now = read_scale(args.scenario, args.cache)
    started = time.perf_counter()
    snapshot = SnapshotBuilder().build(objects, now)
    print(f"domain snapshot build          {time.perf_counter() - started:7.1f} s")
    del objects
    gc.collect()
    args.rss_base = rss_now_mib()
    print(f"peak RSS before the app        {rss_mib():7.0f} MiB   "
          f"(current {args.rss_base:.0f} MiB: the snapshot and what the allocator kept)")
    asyncio.run(drive(snapshot, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
