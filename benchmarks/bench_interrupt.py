#!/usr/bin/env python3
"""Stop the real binary N times each way and print how fast it left and what it still sent.

Steps (``tests/ui/tmux_exit.py`` does one run; ``tests/ui/test_tmux_interrupt.py`` asserts
on a few):
1. Start ``gputui sim`` in its own process, every eviction refused after a short wait (so a
   drain keeps evicting until it is stopped).
2. For each way out (SIGTERM and SIGHUP mid-drain, ``tmux kill-session`` idle and
   mid-drain; ``--ways`` picks), ``--runs`` times: start gputui in a fresh tmux server, wait
   for ``● live``, start a drain when mid-drain and wait until the server has an eviction of
   it, stop it, and watch the process table and the server's counters.
3. Print per way: exit time min / median / max, evictions received more than 2 s after the
   stop (must be 0), evictions after the stop at all (at most the one in flight), requests
   after the process was gone (must be 0), runs whose audit record says interrupted.

A script that prints figures, not a test: ``python benchmarks/bench_interrupt.py`` (about
10 s a run; ``--runs 20`` for the issue's figures).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ui.tmux_exit import ExitRun, Sim, audit_says_interrupted, run_once

PLANS = {"SIGTERM-mid-drain": ("SIGTERM", True), "SIGHUP-mid-drain": ("SIGHUP", True),
         "kill-session-idle": ("kill-session", False),
         "kill-session-mid-drain": ("kill-session", True),
         "ctrl+q-mid-drain": ("ctrl+q", True)}
DEFAULT_WAYS = ("SIGTERM-mid-drain", "SIGHUP-mid-drain", "kill-session-idle",
                "kill-session-mid-drain")


def summary(name: str, runs: list[ExitRun]) -> str:
    times = sorted(run.exit_seconds for run in runs)
    by = {"SIGTERM": "SIGTERM", "SIGHUP": "SIGHUP", "kill-session": "SIGHUP",
          "ctrl+q": "quit"}
    audited = sum(audit_says_interrupted(run.audit, by[run.way]) for run in runs
                  if run.mid_drain)
    drains = sum(run.mid_drain for run in runs)
    return (f"{name:24} runs {len(runs):2}  exit s min {times[0]:.2f} median "
            f"{statistics.median(times):.2f} max {times[-1]:.2f}  over 5 s: "
            f"{sum(t >= 5.0 for t in times)}  late evictions (>2 s): "
            f"{sum(r.late_evictions for r in runs)}  evictions after stop: max "
            f"{max(r.evictions_after for r in runs)}  requests after exit: "
            f"{sum(r.requests_after_exit for r in runs)}"
            + (f"  audit interrupted: {audited}/{drains}" if drains else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ways", nargs="+", choices=sorted(PLANS), default=DEFAULT_WAYS)
    args = parser.parse_args()
    results: dict[str, list[ExitRun]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        sim = Sim(Path(scratch))
        try:
            for name in args.ways:
                way, mid_drain = PLANS[name]
                runs = results[name] = []
                for index in range(args.runs):
                    run = run_once(sim, way, mid_drain, Path(scratch))
                    runs.append(run)
                    print(f"{name} #{index + 1}: {run.exit_seconds:.2f} s, "
                          f"{run.evictions_after} eviction(s) after the stop, "
                          f"{run.requests_after_exit} request(s) after exit", flush=True)
        finally:
            sim.stop()
    print()
    for name, runs in results.items():
        print(summary(name, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
