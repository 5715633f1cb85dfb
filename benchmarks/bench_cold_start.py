#!/usr/bin/env python3
"""Benchmark: a cold start at 5,000 (or 15,000) GPU nodes, against the raw transfer of its lists.

For each server, the project's emulated API server (``gputui sim``'s, objects encoded once)
and a plain JSON server (``benchmarks/plain_server.py``, every page ``json.dumps``-ed on
request as a real API server does), holding the same ``scale-N`` cluster (~7 operand pods
per node), round after round in one run:

* ``raw``: the HTTP transfer of exactly the lists gputui reads, bytes read and discarded
  (``bench_check.raw_transfer``: same paths, selectors, pages, lists at once): the floor;
* ``gputui check --json`` as a subprocess: wall time, peak RSS, CPU time (user + system:
  what a busy shared machine disturbs least), and its ratio to the raw transfer of the
  same round; with ``--base DIR`` the same for another checkout of gputui
  (the code before a change, run beside it on the same server);
* any TUI row registered in :data:`TUI_ROWS` (the hook for the TUI figures of issue 30:
  first rows, complete, ``:upgrades``, filter), measured and reported alike.

Then the split of one ``check`` by stage, from ``py-spy record --gil`` (samples the thread
holding the GIL, whichever it is; so every thread is seen): transfer, decode, clean,
reduce, build, output, start (imports), and the time no thread ran Python (waiting on the
server or the socket).

Prints every run, then min / median / max per row, the ratio to raw per round, the peak RSS,
and the load average beside each round (the machine may be shared: ratios of one run
matter, not absolute times). Asserts nothing (tests never time anything). Targets (issue
30): check <= 2.5x raw and <= 300 MB at 5,000 nodes; <= 3x and <= 700 MB at 15,000.

    python benchmarks/bench_cold_start.py [--nodes 5000|15000] [--servers emulated,plain]
        [--rounds 3] [--base DIR] [--no-split] [--split-runs 3] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_check import raw_transfer  # noqa: E402 - after the path
from stage_split import median_of, print_split, split_check  # noqa: E402

RAW = "raw transfer (floor)"
#: one run: wall seconds, peak RSS in MB, CPU seconds (user + system) of the child
Measure = tuple[float, float, float]
#: a row: its name and what measures one round of it against a server's kubeconfig
Row = tuple[str, Callable[[Path, dict[str, str]], Measure]]
#: the TUI's rows (issue 30: launch to first node rows, to complete findings, ``:upgrades``
#: typed while loading, a filter once live): each a :data:`Row` measured every round on
#: every server beside ``check``, its ratio to the raw transfer printed the same way
TUI_ROWS: list[Row] = []


def tui_rows(checkout: Path) -> list[Row]:
    """The TUI's figures, from ``bench_tui_load.py`` children (each a fresh process at
    160x48, headless): one ``load`` launch gives first rows, complete and the worst wait a
    key typed during the load could have had; an ``upgrades`` launch types ``:upgrades``
    the moment rows appear; a ``filter`` launch types a node's name once live. The three
    figures of one launch are measured once per round and handed to their rows."""
    script = str(REPO / "benchmarks" / "bench_tui_load.py")
    got: dict[str, tuple[dict[str, float], float]] = {}

    def launch(mode: str, kubeconfig: Path, env: dict[str, str]) -> dict[str, float]:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, script, "--one", str(kubeconfig), "--mode",
                               mode], cwd=checkout, env={**env, "BENCH_CHECKOUT": str(checkout)},
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"TUI {mode} failed: {done.stderr.strip()[-400:]}")
        got[mode] = json.loads(done.stdout.strip().splitlines()[-1]), time.perf_counter() - began
        return got[mode][0]

    def row(name: str, mode: str, key: str, first: bool) -> Row:
        def measure(kubeconfig: Path, env: dict[str, str]) -> Measure:
            figures = launch(mode, kubeconfig, env) if first else got[mode][0]
            return figures[key], figures["peak"], 0.0
        return name, measure

    return [row("TUI first node rows", "load", "first", True),
            row("TUI complete (findings)", "load", "complete", False),
            row("TUI worst key wait in load", "load", "key", False),
            row("TUI :upgrades at first rows", "upgrades", "upgrades", True),
            row("TUI filter by name once live", "filter", "filter", True)]


# ------------------------------------------------------------------ the servers
def serve_emulated(scenario: str, kubeconfig: Path) -> int:
    """(child) The emulated cluster, serving until SIGTERM; its kubeconfig is written when
    it answers."""
    from gputui.sim.cluster import EmulatedCluster

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    began = time.perf_counter()
    cluster = EmulatedCluster(scenario).start(timeout=3600)
    print(f"emulated {scenario} started in {time.perf_counter() - began:.1f} s", flush=True)
    cluster.write_kubeconfig(kubeconfig)
    try:
        stop.wait()
    finally:
        cluster.stop()
    return 0


def _wait_for(path: Path, proc: subprocess.Popen[bytes], what: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{what} did not start")
        time.sleep(0.2)
    time.sleep(0.5)


def start_emulated(scenario: str, workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    kubeconfig = workdir / "emulated.kubeconfig"
    kubeconfig.unlink(missing_ok=True)  # an earlier server's: waiting for it would not wait
    proc = subprocess.Popen([sys.executable, __file__, "--serve-emulated", scenario,
                             str(kubeconfig)], cwd=REPO, env=_env(REPO))
    _wait_for(kubeconfig, proc, f"the emulated {scenario}", 3600)
    return proc, kubeconfig


def start_plain(data: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    kubeconfig = workdir / "plain.kubeconfig"
    kubeconfig.unlink(missing_ok=True)  # an earlier server's: waiting for it would not wait
    proc = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "plain_server.py"),
                             "serve", "--data", str(data), "--kubeconfig-out", str(kubeconfig)],
                            cwd=REPO, stdout=subprocess.DEVNULL)
    _wait_for(kubeconfig, proc, "plain_server", 600)
    return proc, kubeconfig


def dump(kubeconfig: Path, data: Path) -> None:
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "plain_server.py"), "dump",
                    "--kubeconfig", str(kubeconfig), "--out", str(data)], check=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --------------------------------------------------------------------- the rows
def _env(checkout: Path, kubeconfig: Path | None = None,
         workdir: Path | None = None) -> dict[str, str]:
    """The environment of a gputui child: this checkout's code, no user settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")}
    env["PYTHONPATH"] = str(checkout)
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    if workdir is not None:
        env["XDG_CONFIG_HOME"] = str(workdir)
    return env


def check_row(name: str, checkout: Path) -> Row:
    def measure(kubeconfig: Path, env: dict[str, str]) -> Measure:
        return run_child([sys.executable, "-m", "gputui", "check", "--json"],
                         {**env, "PYTHONPATH": str(checkout)}, checkout)
    return name, measure


def run_child(argv: list[str], env: dict[str, str], cwd: Path) -> Measure:
    """Wall time, peak RSS and CPU time of one child (``wait4`` gives its rusage); its
    output is discarded. ``python -m`` imports from ``cwd`` first, whatever PYTHONPATH
    says. The CPU time is the figure a busy shared machine disturbs least."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=cwd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{argv[-2:]} failed ({code}): {err.strip()[-300:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _raw(kubeconfig: Path, env: dict[str, str]) -> Measure:
    return raw_transfer(kubeconfig)[0], 0.0, 0.0


@dataclass
class Runs:
    """Every round's figures of one server: row name -> [(measure, load before)]."""

    server: str
    rows: dict[str, list[tuple[Measure, str]]] = field(default_factory=dict)


def measure_server(server: str, kubeconfig: Path, rows: list[Row], rounds: int,
                   workdir: Path) -> Runs:
    env = _env(REPO, kubeconfig, workdir)
    runs = Runs(server)
    raw_transfer(kubeconfig)  # warm the server's caches: every round reads the same lists
    for round_no in range(rounds):
        for name, run in [(RAW, _raw)] + rows:
            before = f"{os.getloadavg()[0]:.2f}"
            result = run(kubeconfig, env)
            runs.rows.setdefault(name, []).append((result, before))
            print(f"{server} round {round_no + 1}: {name:<34} {result[0]:7.2f} s "
                  f"{result[1]:6.0f} MB  cpu {result[2]:6.2f} s  load {before}", flush=True)
    return runs


def report(runs: Runs) -> None:
    floors = [m[0] for m, _ in runs.rows[RAW]]
    print(f"\n{runs.server}: min / median / max over {len(floors)} rounds "
          "(ratio: to the raw transfer of the same round)")
    print(f"{'what':<36} {'wall s':>18} {'x raw':>16} {'peak MB':>13} {'cpu s':>16}  load")
    for name, results in runs.rows.items():
        walls = [m[0] for m, _ in results]
        ratios = [w / f for w, f in zip(walls, floors, strict=False)]
        peaks = [m[1] for m, _ in results]
        cpus = [m[2] for m, _ in results]
        ratio_text = "-" if name == RAW else _spread(ratios, "{:.2f}")
        peak_text = "-" if not any(peaks) else _spread(peaks, "{:.0f}")
        cpu_text = "-" if not any(cpus) else _spread(cpus, "{:.2f}")
        print(f"{name:<36} {_spread(walls, '{:.2f}'):>18} {ratio_text:>16} "
              f"{peak_text:>13} {cpu_text:>16}  {','.join(load for _, load in results)}")


def _spread(values: list[float], form: str) -> str:
    return "/".join(form.format(v) for v in (min(values), statistics.median(values),
                                             max(values)))


def split_server(server: str, kubeconfig: Path, checkouts: list[tuple[str, Path]],
                 runs: int, workdir: Path) -> list[tuple[str, str, dict[str, float]]]:
    """The stage split of each checkout's check, runs interleaved (the load weighs on all
    alike), each stage's median."""
    found: dict[str, list[dict[str, float]]] = {name: [] for name, _ in checkouts}
    for _ in range(max(1, runs)):
        for name, path in checkouts:
            found[name].append(split_check(_env(path, kubeconfig, workdir), workdir))
    return [(server, name, median_of(found[name])) for name, _ in checkouts]


# --------------------------------------------------------------------------- main
def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, choices=(5000, 15000), default=5000)
    parser.add_argument("--servers", default="emulated,plain",
                        help="comma-separated: emulated, plain")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", help="another gputui checkout to run beside this one")
    parser.add_argument("--no-split", action="store_true", help="skip the stage split")
    parser.add_argument("--no-tui", action="store_true", help="skip the TUI rows")
    parser.add_argument("--split-runs", type=int, default=3,
                        help="runs of the stage split per checkout (the median is printed)")
    parser.add_argument("--data", default="/tmp",
                        help="folder of the plain server's dump (kept between runs)")
    parser.add_argument("--serve-emulated", nargs=2, help=argparse.SUPPRESS)  # the child
    return parser.parse_args()


def start_server(server: str, scenario: str, data: Path, want_dump: bool,
                 workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """The server asked for, and its kubeconfig; the plain server's dump is made first
    (from the emulated cluster, so both hold the same cluster) when there is none."""
    if server == "plain" and data.exists():
        return start_plain(data, workdir)
    emulated, kubeconfig = start_emulated(scenario, workdir)
    if want_dump and not data.exists():
        dump(kubeconfig, data)
    if server == "emulated":
        return emulated, kubeconfig
    stop(emulated)
    return start_plain(data, workdir)


def main() -> int:
    args = _arguments()
    if args.serve_emulated:
        return serve_emulated(args.serve_emulated[0], Path(args.serve_emulated[1]))
    scenario = f"scale-{args.nodes}"
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    data = Path(args.data) / f"gputui-plain-{scenario}.json"
    workdir = Path(tempfile.mkdtemp(prefix="gputui-bench-cold-"))
    checkouts = [("this checkout", REPO)] + ([("base", Path(args.base).resolve())]
                                             if args.base else [])
    rows = [check_row(f"check --json ({name})", path) for name, path in checkouts]
    if not args.no_tui:
        rows += [(f"{row_name} ({name})", run) for name, path in checkouts
                 for row_name, run in tui_rows(path)]
    rows += TUI_ROWS
    all_runs: list[Runs] = []
    splits: list[tuple[str, str, dict[str, float]]] = []
    try:
        for server in servers:
            proc, kubeconfig = start_server(server, scenario, data, "plain" in servers, workdir)
            try:
                all_runs.append(measure_server(server, kubeconfig, rows, args.rounds, workdir))
                if not args.no_split:
                    splits += split_server(server, kubeconfig, checkouts, args.split_runs,
                                           workdir)
            finally:
                stop(proc)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n=== {scenario}")
    for runs in all_runs:
        report(runs)
    for server, name, split in splits:
        print_split(f"{server}, {name}", split)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
