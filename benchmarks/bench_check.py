"""Benchmark: ``gputui check --json`` on a big cluster, next to the raw transfer and kubectl.

Serves a recording of a scenario (default ``scale-5000``; recorded first when ``--frozen``
holds none) with ``benchmarks/frozen_server.py``, which answers from pre-serialised bytes so
its own cost does not dominate, then measures against it, round after round in one run:

* the floor: a raw HTTP transfer of exactly the lists gputui reads (same paths, selectors
  and ``limit=500`` pages, the same number of lists at once), bytes read and discarded;
* ``gputui check --json`` as a subprocess (wall time and peak RSS of that process);
* ``kubectl get nodes -o json`` and ``kubectl get pods -A -o json`` (what an operator would
  otherwise run), each as a subprocess, when kubectl is present.

Prints every run, then min / median / max per row with the load average beside each round
(the machine may be shared); asserts nothing (tests never time anything). Targets: gputui
within 2x of the floor; peak RSS under 300 MB at 5,000 nodes, 700 MB at 15,000.

    python benchmarks/bench_check.py [--scenario scale-5000] [--frozen DIR] [--rounds 3]
        [--kubectl PATH] [--kubectl-rounds 1] [--kubeconfig PATH (skip the fixture server)]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import urllib3

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.sources.discovery import discover_namespace
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import LIST_THREADS
from gputui.sources.resources import Feed, cluster_feeds, namespace_feeds

Measure = tuple[float, float, float]  # wall seconds, peak MB, MB transferred
KUBECTL = "/work/main/.tools/kubectl/usr/bin/kubectl"


def start_frozen(folder: Path, scenario: str, workdir: Path,
                 kubectl: str) -> tuple[subprocess.Popen[bytes], Path]:
    """The fixture server over ``folder`` (recorded first if empty); returns it and its
    kubeconfig once it answers."""
    script = str(REPO / "benchmarks" / "frozen_server.py")
    if not (folder / "index.json").exists():
        print(f"recording {scenario} into {folder} (once) ...", flush=True)
        subprocess.run([sys.executable, script, "record", "--scenario", scenario,
                        "--out", str(folder), "--kubectl", kubectl], check=True, cwd=REPO)
    kubeconfig = workdir / "kubeconfig"
    proc = subprocess.Popen([sys.executable, script, "serve", "--dir", str(folder),
                             "--kubeconfig-out", str(kubeconfig)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"frozen_server did not start: {err.strip()[-500:]}")
        time.sleep(0.2)
    time.sleep(0.5)
    return proc, kubeconfig


def raw_transfer(kubeconfig: Path) -> Measure:
    """Every list gputui makes, page by page, bytes only, as many at once as gputui lists:
    the floor for any client."""
    target = load_target(str(kubeconfig))
    http = KubeHttp(target.configuration)
    namespace = discover_namespace(http)
    feeds = cluster_feeds() + (namespace_feeds(namespace) if namespace else [])
    pool = urllib3.PoolManager(maxsize=LIST_THREADS)
    http.close()

    def transfer(feed: Feed) -> int:
        moved, token = 0, ""
        while True:
            query = dict(feed.query(), limit="500")
            if token:
                query["continue"] = token
            response = pool.request("GET", target.server + feed.path, fields=query,
                                    headers={"Accept": "application/json"})
            moved += len(response.data)
            token = _continue_token(response.data)
            if not token:
                return moved

    began = time.perf_counter()
    with ThreadPoolExecutor(LIST_THREADS) as threads:
        moved = sum(threads.map(transfer, feeds))
    return time.perf_counter() - began, 0.0, moved / 1e6

def _continue_token(body: bytes) -> str:
    """The ``metadata.continue`` token, found without parsing the page (it comes first)."""
    head = body[:4096]
    marker = b'"continue":"'
    start = head.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    return head[start:head.index(b'"', start)].decode()


def run_child(argv: Sequence[str], env: dict[str, str] | None = None,
              cwd: Path = REPO) -> Measure:
    """Wall time and peak RSS of one child process (``wait4`` gives that child's rusage).
    ``python -m`` imports from ``cwd`` first, whatever PYTHONPATH says."""
    with tempfile.TemporaryFile() as sink:
        began = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=sink, stderr=subprocess.PIPE,
                                cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.strip()[-300:]}")
        size = sink.seek(0, os.SEEK_END)
    return wall, usage.ru_maxrss / 1024, size / 1e6


def load() -> str:
    """The 1-minute load average: how busy the (shared) machine was."""
    return f"{os.getloadavg()[0]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--frozen", help="recording folder (default /tmp/gputui-frozen-SCENARIO)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kubectl", default=KUBECTL)
    parser.add_argument("--kubectl-rounds", type=int, default=1)
    parser.add_argument("--kubeconfig", help="use this cluster instead of the fixture server")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gputui-bench-"))
    server = None
    if args.kubeconfig:
        kubeconfig = Path(args.kubeconfig)
    else:
        folder = Path(args.frozen or f"/tmp/gputui-frozen-{args.scenario}")
        server, kubeconfig = start_frozen(folder, args.scenario, workdir, args.kubectl)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")}
    env.update(KUBECONFIG=str(kubeconfig), XDG_CONFIG_HOME=str(workdir), PYTHONPATH=str(REPO))
    kubectl = [args.kubectl, "--cache-dir", str(workdir / "kube-cache"), "--request-timeout=0"]
    runs: dict[str, list[tuple[Measure, str]]] = {}
    commands: list[tuple[str, Callable[[], Measure], int]] = [
        ("raw HTTP transfer of gputui's lists (floor)", lambda: raw_transfer(kubeconfig),
         args.rounds),
        ("gputui check --json", lambda: run_child(
            [sys.executable, "-m", "gputui", "check", "--json"], env), args.rounds)]
    if Path(args.kubectl).exists():
        commands += [
            ("kubectl get nodes -o json", lambda: run_child(
                kubectl + ["get", "nodes", "-o", "json"], env), args.kubectl_rounds),
            ("kubectl get pods -A -o json", lambda: run_child(
                kubectl + ["get", "pods", "-A", "-o", "json"], env), args.kubectl_rounds)]
    try:
        raw_transfer(kubeconfig)  # warm the page cache: every round reads the same bytes
        for round_no in range(args.rounds):
            for name, run, rounds in commands:
                if round_no < rounds:
                    before = load()
                    result = run()
                    runs.setdefault(name, []).append((result, before))
                    print(f"round {round_no + 1}: {name:<44} {result[0]:7.2f} s "
                          f"{result[1]:6.0f} MB  load {before}", flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
    report(runs, args.kubeconfig or f"{args.scenario} ({args.frozen or 'recorded here'})")
    return 0


def report(runs: dict[str, list[tuple[Measure, str]]], scenario: str) -> None:
    print(f"\nscenario {scenario}: min / median / max over the runs (load = 1-min average "
          "before each run)")
    print(f"{'what':<46} {'wall s (min/med/max)':>22} {'peak MB':>9} {'MB':>7}  load")
    for name, results in runs.items():
        walls = [r[0] for r, _ in results]
        peak = statistics.median(r[1] for r, _ in results)
        size = statistics.median(r[2] for r, _ in results)
        walls_text = f"{min(walls):.2f}/{statistics.median(walls):.2f}/{max(walls):.2f}"
        peak_text = f"{peak:9.0f}" if peak else f"{'-':>9}"
        print(f"{name:<46} {walls_text:>22} {peak_text} {size:7.1f}  "
              f"{','.join(l for _, l in results)}")
    floors = [r[0] for r, _ in runs["raw HTTP transfer of gputui's lists (floor)"]]
    checks = runs["gputui check --json"]
    ratios = [c[0] / f for (c, _), f in zip(checks, floors, strict=False)]
    peaks = [c[1] for c, _ in checks]
    print(f"\ngputui check / floor, per round: {', '.join(f'{r:.2f}x' for r in ratios)} "
          f"(target <= 2x); peak RSS {min(peaks):.0f}-{max(peaks):.0f} MB")
    print("MB column: transferred for the floor, printed output for the commands")


if __name__ == "__main__":
    raise SystemExit(main())
