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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: whose gputui to run: this checkout's, or another's (``bench_cold_start.py --base``)
sys.path.insert(0, os.environ.get("BENCH_CHECKOUT", str(REPO)))
sys.path.insert(0, str(REPO / "benchmarks"))


class LoopLag:
    """The worst wait of the app's event loop: a task asks to wake every 10 ms and records
    how late it woke. A key press waits at least that long before its handler runs, so the
    worst lag is the worst answer time any key typed during the load could have had."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task = asyncio.get_running_loop().create_task(self._probe())

    async def _probe(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(0.01)
            self.worst = max(self.worst, time.perf_counter() - asked - 0.01)

    def stop(self) -> float:
        self._task.cancel()
        return self.worst


async def _frame_after(frames: Any, moment: float, deadline: float) -> float:
    """The first frame drawn after ``moment`` (seconds since launch; 0 on timeout)."""
    while frames.last <= moment and time.perf_counter() < deadline:
        await asyncio.sleep(0.002)
    return frames.last - LAUNCHED if frames.last > moment else 0.0


async def _type(app: Any, keys: str) -> None:
    """Post keys as a burst (a pasted or fast-typed line): no waiting between them."""
    from textual import events

    names = {":": "colon", "/": "slash", "\r": "enter", "-": "minus"}
    for char in keys:
        name = names.get(char, char)
        app.post_message(events.Key(name, None if name == "enter" else char))


async def measure(kubeconfig: str, timeout: float, mode: str = "load") -> dict[str, float]:
    """One launch of the app against ``kubeconfig``; seconds since launch.

    ``load``: first node rows on screen, the complete table (every node, nothing still
    ``loading``), and the event loop's worst wait meanwhile (``key``). ``upgrades``:
    ``:upgrades`` typed the moment rows appear, seconds to the upgrade lanes drawn.
    ``filter``: once complete, a node's full name typed into the filter, seconds to the
    list showing that one node.
    """
    from gputui.session import session_of
    from gputui.settings import Settings
    from gputui.sources.connect import open_source

    # as ``gputui`` does (ui/run.py): the source starts before the UI is imported
    settings = Settings(kubeconfig=kubeconfig)
    session = session_of(settings, open_source(settings))
    if hasattr(session, "start_early") and not os.environ.get("BENCH_LATE_START"):
        # (older checkouts, ``--base``, and BENCH_LATE_START=1 start the source at mount)
        session.start_early()
    from bench_tui import FrameClock

    from gputui.ui.app import make_app
    from gputui.ui.widgets.node_table import NodeTable

    app = make_app(settings, session)
    got = {"first": 0.0, "complete": 0.0, "key": 0.0, "upgrades": 0.0, "filter": 0.0}
    typed = 0.0
    async with app.run_test(size=(160, 48)):
        frames, lag = FrameClock(app), LoopLag()
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            # plain sleeps: Pilot.pause would wait for the table's queued slices (idle)
            await asyncio.sleep(0.005)
            if mode == "upgrades" and typed:
                if type(app.screen).__name__ == "UpgradesScreen":
                    shown = time.perf_counter()
                    got["upgrades"] = await _frame_after(frames, shown, deadline) - typed
                    break
                continue
            tables = app.screen.query(NodeTable)
            table = tables.first() if tables else None
            rows = table.row_count if table is not None else 0
            if rows and not got["first"]:
                rows_at = time.perf_counter()
                got["first"] = await _frame_after(frames, rows_at, deadline)
                if mode == "upgrades":
                    typed = time.perf_counter() - LAUNCHED
                    await _type(app, ":upgrades\r")
                continue
            snapshot = app.snapshot
            if got["first"] and not snapshot.loading and rows >= len(snapshot.nodes):
                got["complete"] = time.perf_counter() - LAUNCHED
                got["key"] = lag.stop()
                if mode == "filter" and table is not None:
                    got["filter"] = await _filter(app, table, frames, deadline)
                break
    got["peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return got


async def _filter(app: Any, table: Any, frames: Any, deadline: float) -> float:
    """Type ``/`` and the name of the node at the list's middle, then enter: seconds from
    the first key to a frame of the list showing that node alone."""
    name = table.shown_nodes[len(table.shown_nodes) // 2]
    began = time.perf_counter()
    await _type(app, "/" + name + "\r")
    while time.perf_counter() < deadline:
        await asyncio.sleep(0.002)
        shown = table.shown_nodes
        if table.node_filter.text == name and name in shown and len(shown) < 10:
            break
    done = await _frame_after(frames, time.perf_counter(), deadline)
    return done - (began - LAUNCHED) if done else 0.0


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
    parser.add_argument("--mode", default="load", choices=("load", "upgrades", "filter"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(measure(args.one, args.timeout, args.mode))))
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
