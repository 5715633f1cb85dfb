#!/usr/bin/env python3
"""How soon the TUI shows a big cluster: launch to first node rows, to the complete table.

Runs the real app headless (``make_app`` + ``run_test``) on the live source against the
frozen fixture server (``benchmarks/frozen_server.py``, pre-serialised answers), each round
in a fresh process, and prints per round:

* launch to the first node rows on screen (nodes are shown before the pods are listed),
* launch to the complete table (every node, no part still ``loading``),
* the process's peak RSS,
* the raw transfer of the same lists in the same round (``bench_check.raw_transfer``), and
  the complete-table time as a ratio of it,

with the 1-minute load average beside each (the machine may be shared). A script that
prints figures, not a test. Targets (issue 12): first rows < 1.5 s (5,000 nodes) / < 3 s
(15,000); complete table <= 2.5x the raw transfer; peak RSS <= 300 / 700 MB.

    python benchmarks/bench_tui_load.py [--scenario scale-5000] [--frozen DIR] [--rounds 3]
"""

from __future__ import annotations

import time

LAUNCHED = time.perf_counter()  # before any heavy import: "launch" is the process start

import argparse  # after the launch stamp on purpose
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


async def measure(kubeconfig: str, timeout: float) -> dict[str, float]:
    """One launch of the app against ``kubeconfig``: seconds to first rows and to complete."""
    from bench_tui import FrameClock

    from gputui.session import session_of
    from gputui.settings import Settings
    from gputui.sources.connect import open_source
    from gputui.ui.app import make_app
    from gputui.ui.widgets.node_table import NodeTable

    settings = Settings(kubeconfig=kubeconfig)
    app = make_app(settings, session_of(settings, open_source(settings)))
    first = complete = rows_at = 0.0
    async with app.run_test(size=(160, 48)):
        frames = FrameClock(app)
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            # plain sleeps: Pilot.pause would wait for the table's queued slices (idle)
            await asyncio.sleep(0.005)
            table = app.screen.query(NodeTable)
            rows = table.first().row_count if table else 0
            if rows and not rows_at:
                rows_at = time.perf_counter()
            if rows_at and not first and frames.last > rows_at:  # a frame shows them
                first = frames.last - LAUNCHED
            snapshot = app.snapshot
            if first and not snapshot.loading and rows >= len(snapshot.nodes):
                complete = time.perf_counter() - LAUNCHED
                break
    return {"first": first, "complete": complete,
            "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def one_round(kubeconfig: Path) -> dict[str, float]:
    """A fresh process for the app (its own peak RSS), then the raw transfer."""
    from bench_check import raw_transfer

    load = os.getloadavg()[0]
    done = subprocess.run([sys.executable, __file__, "--one", str(kubeconfig)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"app round failed: {done.stderr.strip()[-500:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    result["raw"] = raw_transfer(kubeconfig)[0]
    result["load"] = load
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--frozen", help="recording folder (default /tmp/gputui-frozen-SCENARIO)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a single app round (child)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(measure(args.one, args.timeout))))
        return 0
    from bench_check import KUBECTL, raw_transfer, start_frozen

    workdir = Path(tempfile.mkdtemp(prefix="gputui-bench-tui-"))
    folder = Path(args.frozen or f"/tmp/gputui-frozen-{args.scenario}")
    server, kubeconfig = start_frozen(folder, args.scenario, workdir, KUBECTL)
    rounds = []
    try:
        raw_transfer(kubeconfig)  # warm the page cache
        for index in range(args.rounds):
            got = one_round(kubeconfig)
            rounds.append(got)
            print(f"round {index + 1}: first rows {got['first']:6.2f} s  complete "
                  f"{got['complete']:6.2f} s  raw {got['raw']:5.2f} s  "
                  f"({got['complete'] / got['raw']:.1f}x)  peak {got['peak']:5.0f} MB  "
                  f"load {got['load']:.2f}", flush=True)
    finally:
        server.terminate()
        server.wait(30)
    print(f"\nscenario {args.scenario} ({folder}): min / median / max of {len(rounds)} rounds")
    for key, label in (("first", "launch to first node rows, s"),
                       ("complete", "launch to complete table, s"), ("raw", "raw transfer, s"),
                       ("peak", "peak RSS, MB")):
        values = [r[key] for r in rounds]
        print(f"{label:<32} {min(values):8.2f} {statistics.median(values):8.2f} "
              f"{max(values):8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
