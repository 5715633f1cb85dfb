#!/usr/bin/env python3
"""How long each view takes to show at 5,000 GPU nodes, from the key to the screen idle.

Reads the ``scale-5000`` cluster once (cached like ``bench_tui.py``), builds its snapshot,
runs the real app headless (``make_app`` + ``run_test``) with the node list filled, then per
view, ``--rounds`` times: press the view's number key on the node list, wait until the view
is the screen shown and the app has drawn it with nothing left in its queue, and go back
to the node list. Prints min / median / max seconds per view, and the 1-minute load average
(the machine may be shared: compare runs of the same machine and load).

A script that prints figures, not a test: ``python benchmarks/bench_views.py
[--scenario scale-5000] [--rounds 3] [--views upgrades,mig,findings,joins,timeline,ops]``.
Before the MIG view drew a window of cards (issue 30), its switch took 35 s at 5,000 nodes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_tui import read_scale  # noqa: E402 - after the path

from gputui.domain.snapshot import SnapshotBuilder  # noqa: E402
from gputui.session import session_of  # noqa: E402
from gputui.settings import Settings  # noqa: E402
from gputui.ui.app import make_app  # noqa: E402
from gputui.ui.commands import command  # noqa: E402
from gputui.ui.widgets.node_table import NodeTable  # noqa: E402
from tests.fixtures.recordings import ReplaySource  # noqa: E402

#: view -> the registry command whose key switches to it
VIEW_COMMANDS = {"findings": "view_findings", "upgrades": "view_upgrades", "mig": "view_mig",
                 "joins": "view_joins", "ops": "view_ops", "timeline": "view_timeline"}


async def measure(snapshot: object, views: list[str], rounds: int) -> dict[str, list[float]]:
    """Seconds from each view's key to its screen drawn, per view."""
    source = ReplaySource([], last_update=snapshot.generated_at)  # type: ignore[attr-defined]
    settings = Settings()
    app = make_app(settings, session_of(settings, source,
                                        clock=lambda: snapshot.generated_at))  # type: ignore[attr-defined]
    times: dict[str, list[float]] = {view: [] for view in views}
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(NodeTable)
        source.push(snapshot)  # type: ignore[arg-type]
        while table.row_count < len(snapshot.nodes):  # type: ignore[attr-defined]
            await pilot.pause(0.01)
        await pilot.pause()
        for _ in range(rounds):
            for view in views:
                key = command(VIEW_COMMANDS[view]).keys.split(",")[0]
                # a view without a key of its own is typed as a command: `:name` then enter
                keys = [key] if key else ["colon", *view, "enter"]
                began = time.perf_counter()
                await pilot.press(*keys)
                while app.current_mode != view:
                    await pilot.pause(0.001)
                await pilot.pause()  # what the switch queued (the snapshot handed down)
                await pilot.pause()
                times[view].append(time.perf_counter() - began)
                await pilot.press("1")
                while app.current_mode != "nodes":
                    await pilot.pause(0.001)
                await pilot.pause()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--views", default=",".join(VIEW_COMMANDS))
    parser.add_argument("--cache", type=Path,
                        default=Path("/tmp/gputui-bench-scale-5000.pickle"))
    args = parser.parse_args()
    objects, now = read_scale(args.scenario, args.cache)
    snapshot = SnapshotBuilder().build(objects, now=now)
    views = [v for v in args.views.split(",") if v]
    times = asyncio.run(measure(snapshot, views, args.rounds))
    print(f"{args.scenario}: {len(snapshot.nodes)} nodes, {len(snapshot.mig.nodes)} MIG; "
          f"key to the view drawn, s (min / median / max of {args.rounds}); "
          f"load {os.getloadavg()[0]:.1f}")
    for view, runs in times.items():
        print(f"  {view:<10} {min(runs):6.2f} {statistics.median(runs):6.2f} {max(runs):6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
