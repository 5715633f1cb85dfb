#!/usr/bin/env python3
"""Key ``y`` to the cordon visible in the node table, at 5,000 GPU nodes.

Steps:
1. Start the emulated ``scale-5000`` cluster in this process and run the app headless
   (``make_app`` + ``run_test``) on the live source and a :class:`KubeWriter`, exactly the
   TUI's path: list+watch over HTTP, the runner's dry run and apply over HTTP, the audit log.
   The emulated operator's controllers are stopped once the table is full (``--keep-operator``
   leaves them on: in this one process they would take the GIL from the app being measured).
2. For ``--presses`` nodes in turn: put the cursor on the node, press ``c``, wait until the
   dialog has the server's dry run, then time from pressing ``y`` until the node's STATUS
   cell in the table says ``Cordoned`` (patch sent, watch event received,
   snapshot built, table patched).
3. Print p50, p99 and max of those latencies (target: under 1 s).

A script that prints figures, not a test: ``python benchmarks/bench_actions.py``; run it
three times and compare the spread.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.writer import writer_for_source
from gputui.ui.app import make_app
from gputui.ui.screens.confirm import ConfirmScreen
from gputui.ui.screens.nodes import NodesScreen


async def wait_for(pilot: Any, check: Any, timeout: float, step: float = 0.002) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not reached")
        await pilot.pause(step)


def status_cell(table: Any, node: str) -> str:
    return str(table.get_cell(node, "status"))


async def drive(cluster: EmulatedCluster, kubeconfig: Path, audit: Path,
                args: argparse.Namespace) -> list[float]:
    settings = Settings(kubeconfig=str(kubeconfig), audit_log=str(audit))
    source = open_source(settings)
    writer = writer_for_source(source, read_only=False)
    app = make_app(settings, session_of(settings, source, writer=writer))
    latencies: list[float] = []
    started = time.perf_counter()
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await wait_for(pilot, lambda: screen.table.row_count >= args.nodes, 600, 0.2)
        await wait_for(pilot, lambda: app.runner is not None
                       and not app.runner.permissions.pending, 60, 0.05)
        print(f"table filled with {screen.table.row_count} nodes in "
              f"{time.perf_counter() - started:.1f} s")
        if not args.keep_operator and cluster.operator is not None:
            await asyncio.to_thread(cluster.call, cluster.operator.stop(), 120)
        names = [n for n, v in app.snapshot.nodes.items() if not v.cordoned][:args.presses]
        for name in names:
            screen.show_node(name)
            await wait_for(pilot, lambda n=name: screen.table.selected_node == n, 10)
            screen.table.focus()
            await pilot.press("c")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                           and app.screen.dry_run is not None, 30)
            t0 = time.perf_counter()
            await pilot.press("y")
            await wait_for(pilot, lambda n=name: "Cordoned"
                           in status_cell(screen.table, n), 30)
            latencies.append(time.perf_counter() - t0)
            await pilot.pause(args.gap)
    if writer is not None:
        writer.close()
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--nodes", type=int, default=5000, help="rows to wait for")
    parser.add_argument("--presses", type=int, default=20, help="cordons to time")
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between presses")
    parser.add_argument("--keep-operator", action="store_true",
                        help="leave the emulated operator's controllers running")
    args = parser.parse_args()
    cluster = EmulatedCluster(args.scenario).start(timeout=600)
    try:
        with tempfile.TemporaryDirectory(prefix="gputui-bench-") as tmp:
            kubeconfig = cluster.write_kubeconfig(Path(tmp) / "kubeconfig")
            latencies = asyncio.run(drive(cluster, kubeconfig, Path(tmp) / "audit.jsonl",
                                          args))
            audited = len((Path(tmp) / "audit.jsonl").read_text().splitlines())
    finally:
        cluster.stop()
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(f"key y -> cordon visible in the table, {len(latencies)} presses on "
          f"{args.scenario}: p50 {statistics.median(latencies) * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms "
          f"({audited} audit lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
