"""Benchmark: ``gputui check --json`` on a big emulated cluster, next to its floor and kubectl.

Serves a scenario (default ``scale-5000``) with ``gputui sim`` in its own process, then
measures, against that same server:

* the floor: a raw HTTP transfer of exactly the lists gputui reads (same paths, selectors
  and ``limit=500`` pages), bytes read and discarded, nothing parsed;
* ``gputui check --json`` as a subprocess (wall time and peak RSS of that process);
* ``kubectl get nodes -o json`` and ``kubectl get pods -A -o json`` (what an operator would
  otherwise run), each as a subprocess.

Prints the median of ``--rounds`` runs; asserts nothing (tests never time anything).
Targets: gputui under 2x the floor, under 300 MB peak.

    python benchmarks/bench_check.py [--scenario scale-5000] [--rounds 3]
        [--kubectl .tools/kubectl/usr/bin/kubectl] [--kubeconfig PATH (skip starting a sim)]
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
from pathlib import Path

import urllib3

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.sources.discovery import discover_namespace
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.resources import cluster_feeds, namespace_feeds

Measure = tuple[float, float, float]  # wall seconds, peak MB, MB transferred


def start_sim(scenario: str, workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """``gputui sim`` in its own process; returns it once its kubeconfig exists."""
    kubeconfig = workdir / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "gputui", "sim", "--scenario", scenario,
                             "--kubeconfig-out", str(kubeconfig)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"gputui sim did not start: {err.strip()[-500:]}")
        time.sleep(0.5)
    time.sleep(1.0)
    return proc, kubeconfig


def raw_transfer(kubeconfig: Path) -> Measure:
    """Every list gputui makes, page by page, bytes only: the floor for any client."""
    target = load_target(str(kubeconfig))
    http = KubeHttp(target.configuration)
    namespace = discover_namespace(http)
    feeds = cluster_feeds() + (namespace_feeds(namespace) if namespace else [])
    pool = urllib3.PoolManager()
    began = time.perf_counter()
    moved = 0
    for feed in feeds:
        token = ""
        while True:
            query = dict(feed.query(), limit="500")
            if token:
                query["continue"] = token
            response = pool.request("GET", target.server + feed.path, fields=query,
                                    headers={"Accept": "application/json"})
            moved += len(response.data)
            token = _continue_token(response.data)
            if not token:
                break
    http.close()
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


def run_child(argv: Sequence[str], env: dict[str, str] | None = None) -> Measure:
    """Wall time and peak RSS of one child process (``wait4`` gives that child's rusage)."""
    with tempfile.TemporaryFile() as sink:
        began = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=sink, stderr=subprocess.PIPE,
                                cwd=REPO, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.strip()[-300:]}")
        size = sink.seek(0, os.SEEK_END)
    return wall, usage.ru_maxrss / 1024, size / 1e6


def median(run: Callable[[], Measure], rounds: int) -> Measure:
    results = [run() for _ in range(rounds)]
    return tuple(statistics.median(r[i] for r in results) for i in range(3))  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kubectl", default=str(REPO / ".tools/kubectl/usr/bin/kubectl"))
    parser.add_argument("--kubeconfig", help="use this cluster instead of starting a sim")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gputui-bench-"))
    sim = None
    if args.kubeconfig:
        kubeconfig = Path(args.kubeconfig)
    else:
        print(f"starting gputui sim --scenario {args.scenario} ...", flush=True)
        sim, kubeconfig = start_sim(args.scenario, workdir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")}
    env.update(KUBECONFIG=str(kubeconfig), XDG_CONFIG_HOME=str(workdir), PYTHONPATH=str(REPO))
    kubectl = [args.kubectl, "--cache-dir", str(workdir / "kube-cache"), "--request-timeout=0"]
    try:
        rows = [
            ("raw HTTP transfer of gputui's lists (floor)",
             median(lambda: raw_transfer(kubeconfig), args.rounds)),
            ("gputui check --json",
             median(lambda: run_child([sys.executable, "-m", "gputui", "check", "--json"], env),
                    args.rounds)),
        ]
        if Path(args.kubectl).exists():
            rows.append(("kubectl get nodes -o json", median(
                lambda: run_child(kubectl + ["get", "nodes", "-o", "json"], env), args.rounds)))
            rows.append(("kubectl get pods -A -o json", median(
                lambda: run_child(kubectl + ["get", "pods", "-A", "-o", "json"], env),
                args.rounds)))
    finally:
        if sim is not None:
            sim.terminate()
            sim.wait(30)
    report(rows, args.scenario, args.rounds)
    return 0


def report(rows: list[tuple[str, Measure]], scenario: str, rounds: int) -> None:
    print(f"\nscenario {scenario}, median of {rounds} run(s)")
    print(f"{'what':<46} {'wall s':>8} {'peak MB':>9} {'MB':>9}")
    for name, (wall, peak, size) in rows:
        peak_text = f"{peak:9.0f}" if peak else f"{'-':>9}"
        print(f"{name:<46} {wall:8.2f} {peak_text} {size:9.1f}")
    floor = rows[0][1][0]
    check = rows[1][1]
    print(f"\ngputui check / floor: {check[0] / floor:.2f}x  (target < 2x); "
          f"peak {check[1]:.0f} MB (target < 300 MB)")
    print("MB column: transferred for the floor, printed output for the commands")


if __name__ == "__main__":
    raise SystemExit(main())
