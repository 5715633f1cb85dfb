#!/usr/bin/env python3
"""Metrics at 5,000 GPU nodes with Prometheus: queries and bytes per refresh, key latency.

Steps:
1. The ``scale-5000`` snapshot (raw objects cached like ``bench_tui.py``: ``--cache``).
2. A real Prometheus (Debian's package) on loopback scrapes one synthetic target that serves
   dcgm-exporter series for every GPU of every node (``honor_labels``): utilisation,
   temperature and the XID gauge for all 40,000 GPUs (a few with an XID), and the full set
   the metrics pane draws for the first ``--full-nodes`` nodes.
3. The app runs headless on the snapshot with the real metrics feed (Prometheus source)
   refreshing every ``--refresh`` second(s), the metrics tab open; ``--keys`` presses of
   ``down``/``up`` are timed from the key event to the frame that shows it.
4. Prints queries and response bytes per refresh, and the key p50/p99, for ``--runs`` runs
   and their spread.

A script that prints figures, not a test: ``python benchmarks/bench_metrics.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_tui import FrameClock, key_to_frame, read_scale

from gputui.session import session_of
from gputui.domain.model import ClusterSnapshot
from gputui.domain.snapshot import SnapshotBuilder
from gputui.settings import Settings
from gputui.sources.metrics import MetricsFeed
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.ui.app import make_app
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures.recordings import ReplaySource
from tests.metrics.prom import Prometheus
from tests.helpers import free_port

FULL = ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_SM_CLOCK")


def exposition(nodes: list[str], gpus: int, full_nodes: int) -> bytes:
    """One body with every GPU's series, as a federation endpoint would serve it."""
    lines: dict[str, list[str]] = {"DCGM_FI_DEV_GPU_UTIL": [], "DCGM_FI_DEV_GPU_TEMP": [],
                                   "DCGM_FI_DEV_XID_ERRORS": [], **{n: [] for n in FULL}}
    for i, node in enumerate(nodes):
        for gpu in range(gpus):
            labels = f'gpu="{gpu}",UUID="GPU-{i}-{gpu}",modelName="NVIDIA H100 80GB HBM3",' \
                     f'Hostname="{node}"'
            util = (i * 7 + gpu * 13) % 101
            lines["DCGM_FI_DEV_GPU_UTIL"].append(f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {util}")
            lines["DCGM_FI_DEV_GPU_TEMP"].append(f"DCGM_FI_DEV_GPU_TEMP{{{labels}}} {31 + util * 0.4}")
            xid = 79 if (i, gpu) in ((3, 3), (1200, 5)) else 0
            msg = "GPU has fallen off the bus" if xid else "No Error"
            lines["DCGM_FI_DEV_XID_ERRORS"].append(
                f'DCGM_FI_DEV_XID_ERRORS{{{labels},err_code="{xid}",err_msg="{msg}"}} {xid}')
            if i < full_nodes:
                for name, value in zip(FULL, (60000, 21000, 600, 1980)):
                    lines[name].append(f"{name}{{{labels}}} {value}")
    out = []
    for name, body in lines.items():
        out += [f"# TYPE {name} gauge", *body]
    return gzip.compress(("\n".join(out) + "\n").encode(), compresslevel=1)


def serve(body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start(tmp: Path, target: int, interval: float, nice: int) -> Prometheus:
    """Prometheus scraping the synthetic target (``start_prometheus`` writes its own config,
    so the scrape config is written here and the server restarted on it)."""
    import shutil
    import subprocess
    import urllib.request

    config = tmp / "bench.yml"
    config.write_text(
        f"global: {{scrape_interval: {int(interval)}s, scrape_timeout: {int(interval)}s}}\n"
        "scrape_configs:\n  - job_name: federate\n    honor_labels: true\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{target}']}}]\n")
    port = free_port()
    proc = subprocess.Popen(
        ["nice", "-n", str(nice), str(shutil.which("prometheus")), f"--config.file={config}",
         f"--web.listen-address=127.0.0.1:{port}", f"--storage.tsdb.path={tmp / 'tsdb'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = Prometheus(proc, port)
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2):
                break
        except OSError:
            time.sleep(0.2)
    return server


async def one_run(snapshot: ClusterSnapshot, url: str, args: argparse.Namespace) -> dict[str, float]:
    prometheus = PrometheusMetrics(PrometheusOptions(url, timeout=10.0))
    feed = MetricsFeed(prometheus=prometheus, refresh=args.refresh, clock=time.time)
    if args.no_metrics:  # the baseline: the same app and keys without a metrics feed
        feed = MetricsFeed(refresh=3600.0)
    detached = None
    if args.detached:  # the same queries, their readings dropped: the machine's share
        detached, feed = feed, MetricsFeed(refresh=3600.0)
        detached.start(lambda reading: None)
    source = ReplaySource([], last_update=snapshot.generated_at)
    app = make_app(Settings(refresh=args.refresh), session_of(Settings(refresh=args.refresh), source, clock=lambda: snapshot.generated_at, metrics=feed))
    async with app.run_test(size=(160, 48)) as pilot:
        app.bench_frames = FrameClock(app)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(NodeTable)
        source.push(snapshot)
        while table.row_count < len(snapshot.nodes):
            await pilot.pause(0.05)
        await pilot.press("m")
        while feed.readings < (1 if args.no_metrics or args.detached else 3):
            await pilot.pause(0.1)  # the tab, the fleet line and the util column are live
        traffic = prometheus.traffic
        counted = detached or feed
        queries0, bytes0, readings0 = traffic.queries, traffic.bytes, counted.readings
        latencies = []
        for index in range(args.keys):
            key = "down" if (index // 20) % 2 == 0 else "up"
            latencies.append(await key_to_frame(app, table, key) * 1000)
            await asyncio.sleep(args.gap)
        if detached is not None:
            detached.stop()
        readings = max(1, counted.readings - readings0)
        figures = {"queries": (traffic.queries - queries0) / readings,
                   "kib": (traffic.bytes - bytes0) / readings / 1024, "readings": readings,
                   "origin_ok": float(counted.last.origin.kind == "prometheus"
                                      or args.no_metrics)}
    latencies.sort()
    figures["p50"] = statistics.median(latencies)
    figures["p99"] = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scale-5000")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/gputui-bench-scale-5000.pickle"))
    parser.add_argument("--refresh", type=float, default=1.0)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--gap", type=float, default=0.02)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--full-nodes", type=int, default=100)
    parser.add_argument("--no-metrics", action="store_true",
                        help="baseline: the same keys without a metrics feed")
    parser.add_argument("--detached", action="store_true",
                        help="query Prometheus as usual but drop the readings (separates the "
                             "UI's work from the load Prometheus puts on a shared machine)")
    parser.add_argument("--nice", type=int, default=0,
                        help="niceness of the Prometheus process (19 approximates a Prometheus "
                             "on its own machine, as in production)")
    parser.add_argument("--scrape", type=int, default=15, help="scrape interval (s)")
    args = parser.parse_args()
    objects, now = read_scale(args.scenario, args.cache)
    snapshot = SnapshotBuilder().build(objects, now)
    del objects
    nodes = sorted(snapshot.nodes)
    gpus = 8
    body = exposition(nodes, gpus, args.full_nodes)
    print(f"synthetic target: {len(nodes)} nodes x {gpus} GPUs, {len(body) / 2**20:.1f} MiB gzip")
    target = serve(body)
    with tempfile.TemporaryDirectory(prefix="gputui-bench-prom-") as tmp:
        server = start(Path(tmp), target.server_port, args.scrape, args.nice)
        try:
            for _ in range(600):  # wait for the first scrape to land
                if server.query("count(DCGM_FI_DEV_GPU_UTIL)"):
                    break
                time.sleep(0.5)
            results = []
            for run in range(args.runs):
                figures = asyncio.run(one_run(snapshot, server.url, args))
                results.append(figures)
                print(f"run {run + 1}: {figures['queries']:.1f} queries and "
                      f"{figures['kib']:.1f} KiB per refresh ({figures['readings']:.0f} refreshes)"
                      f", key p50 / p99 {figures['p50']:.1f} / {figures['p99']:.1f} ms"
                      f"{'' if figures['origin_ok'] else '  (Prometheus did not answer!)'}")
        finally:
            server.stop()
            target.shutdown()
    for key, label in (("queries", "queries per refresh"), ("kib", "KiB per refresh"),
                       ("p99", "key p99 ms (target < 50)")):
        values = [r[key] for r in results]
        print(f"{label:<28} median {statistics.median(values):7.1f}  "
              f"min {min(values):7.1f}  max {max(values):7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
