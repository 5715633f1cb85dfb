#!/usr/bin/env python3
"""Soak: gputui's live source, headless, on an emulated upgrade under a random fault mix.

Steps:
1. ``gputui sim --scenario upgrade-rolling`` runs in a child process with a fault schedule
   drawn from ``--seed``: every 10-30 s one API-level fault (429 with Retry-After, 500, 503,
   resets mid-body, latency, watches closed early or expired, the server down, events
   forbidden) for 5-15 s, with half the watches closed early meanwhile (so the clients meet
   the fault when they come back); the last ``--quiet`` seconds are fault-free.
2. This process runs what the TUI runs to get its data (``open_source``: the list+watch
   source and the domain's snapshot builder, no terminal) for ``--minutes`` minutes, and
   records every status change and snapshot.
3. It prints: faults injected (by kind, counted by the server), recoveries (a stale or
   disconnected state that became live again), the longest stale episode and the longest
   gap between two snapshots, requests per second to the server (peak and mean, counted by
   the server), this process's memory (RSS) after the first snapshot and at the end, and
   whether the final cache equals a fresh list of the server (compared until equal or 30 s;
   the upgrade may still be moving objects).

A script that prints figures, not a test: ``python benchmarks/soak.py --minutes 3``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects

MIX = ["429:1%50", "500%30", "503:1%30", "reset%20", "latency:400", "watch-close",
       "watch-410", "down", "forbid:events"]


def schedule(seconds: float, quiet: float, seed: int) -> list[str]:
    """Fault items with start and duration, one every 15-30 s until the quiet end."""
    rng = random.Random(seed)
    items, at = [], 10.0
    while True:
        duration = rng.uniform(5, 15)
        if at + duration > seconds - quiet:
            return items
        window = f"@{at:.0f}s+{duration:.0f}s"
        # a struggling server also ends watches early, so clients meet the fault on their
        # way back; faults only touch new requests otherwise (except down and reset)
        items += [rng.choice(MIX) + window, "watch-close%50" + window]
        at += duration + rng.uniform(5, 15)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Recorder:
    """Status changes and snapshots as they come (source threads call in)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshots: list[float] = []
        self.recoveries = 0
        self.stale_episodes: list[float] = []
        self.unhealthy_since: float | None = None
        self.messages: set[str] = set()

    def snapshot(self, _: Any) -> None:
        with self.lock:
            self.snapshots.append(time.monotonic())

    def status(self, status: SourceStatus) -> None:
        healthy = status.connection is Connection.LIVE and not status.stale_since
        with self.lock:
            if status.message:
                self.messages.add(status.message.split(":")[0][:60])
            if not healthy and self.unhealthy_since is None and self.snapshots:
                self.unhealthy_since = time.monotonic()
            elif healthy and self.unhealthy_since is not None:
                self.stale_episodes.append(time.monotonic() - self.unhealthy_since)
                self.unhealthy_since = None
                self.recoveries += 1


def fingerprint(objects: Any) -> Any:
    def versions(items: Any) -> list[tuple[Any, str]]:
        return sorted((key, str(obj["metadata"].get("resourceVersion")))
                      for key, obj in items.items())
    return (versions(objects.nodes), versions(objects.pods), versions(objects.daemonsets),
            sorted(str(p["metadata"].get("resourceVersion")) for p in objects.cluster_policies))


class KeepingBuilder(SnapshotBuilder):
    """The domain's builder, keeping the inputs of the last build (the source's cache)."""

    last: Any = None

    def build(self, objects: Any, now: float, changed_nodes: Any = None) -> Any:
        self.last = objects
        return super().build(objects, now, changed_nodes)


def final_match(builder: KeepingBuilder, kubeconfig: Path) -> bool:
    """The last build's inputs equal to a fresh list, tried for 30 s (the upgrade may still
    move objects; the source rebuilds at least every 5 s)."""
    target = load_target(str(kubeconfig))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        fresh = fingerprint(read_objects(target))
        time.sleep(1.0)  # the watch's delivery of the same changes
        if fingerprint(builder.last) == fresh:
            return True
    return False


def start_sim(args: argparse.Namespace, workdir: Path, faults: list[str]
              ) -> tuple[subprocess.Popen[str], Path, str]:
    kubeconfig = workdir / "kubeconfig"
    child = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", args.scenario, "--speed",
         str(args.speed), "--kubeconfig-out", str(kubeconfig), "--faults",
         ",".join(faults + [f"seed:{args.seed}"])],
        cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    url = line.split("serving the Kubernetes API at ")[1].split()[0]
    return child, kubeconfig, url


def main() -> None:
    logging.getLogger("gputui").addHandler(logging.NullHandler())  # figures only on stdout
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--quiet", type=float, default=30.0, help="fault-free seconds at the end")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scenario", default="upgrade-rolling")
    parser.add_argument("--speed", type=float, default=10.0)
    args = parser.parse_args()
    seconds = args.minutes * 60
    faults = schedule(seconds, args.quiet, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        child, kubeconfig, url = start_sim(args, Path(tmp), faults)
        recorder = Recorder()
        started = time.monotonic()
        try:
            builder = KeepingBuilder()
            source = KubeSource(load_target(str(kubeconfig)), builder=builder)
            source.start(recorder.snapshot, recorder.status)
            while not recorder.snapshots:
                time.sleep(0.1)
            rss_start = rss_mib()
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))
            matched = final_match(builder, kubeconfig)
            rss_end = rss_mib()
            stats = json.load(urllib.request.urlopen(url + "/gputui-sim/faults"))
            source.stop()
        finally:
            child.terminate()
            child.wait(10)
    report(args, faults, recorder, stats, rss_start, rss_end, matched)


def report(args: argparse.Namespace, faults: list[str], recorder: Recorder,
           stats: dict[str, Any], rss_start: float, rss_end: float, matched: bool) -> None:
    per_second = [int(v) for v in stats["per_second"].values()]
    gaps = [b - a for a, b in zip(recorder.snapshots, recorder.snapshots[1:])]
    still = recorder.unhealthy_since
    episodes = recorder.stale_episodes + ([time.monotonic() - still] if still else [])
    injected = stats["injected"]
    print(f"soak: scenario {args.scenario}, speed {args.speed:g}, {args.minutes:g} min, "
          f"seed {args.seed}, {len(faults) // 2} fault windows")
    print(f"faults scheduled  : {', '.join(f for f in faults if 'watch-close%50' not in f)}"
          " (each with watch-close%50)")
    print(f"faults injected   : {sum(injected.values())} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(injected.items()))})")
    print(f"recoveries        : {recorder.recoveries} (states shown: "
          f"{'; '.join(sorted(recorder.messages)) or '-'})")
    print(f"max staleness     : {max(episodes, default=0):.1f} s stale or disconnected; "
          f"longest gap between snapshots {max(gaps, default=0):.1f} s")
    print(f"requests/s        : peak {max(per_second, default=0)}, mean "
          f"{sum(per_second) / max(1.0, stats['elapsed']):.1f} "
          f"({sum(per_second)} requests in {stats['elapsed']:.0f} s)")
    print(f"memory (RSS)      : {rss_start:.1f} MiB after the first snapshot, "
          f"{rss_end:.1f} MiB at the end")
    print(f"final snapshot    : {'matches' if matched else 'DOES NOT match'} a fresh list")


if __name__ == "__main__":
    main()
