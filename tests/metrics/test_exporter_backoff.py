"""A failing exporter is asked again in minutes, not every refresh (issue 26: one TUI sent
1,379 failing scrapes in 577 s to a pod proxy that could not reach the exporters).

The emulated server fails every exporter scrape as a real pod proxy does (400 "address not
allowed", 503 for a dead pod) or lets it answer garbage; the readers run on a counting
clock, 2 s per metrics refresh and 30 s per XID read, so ten minutes pass in a few hundred
calls, and the server's request log counts every scrape that reached it.
"""

from __future__ import annotations

import time

import pytest

from gputui.domain.metrics import MetricsWant
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.backoff import TargetBackoff
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.scrape import ExporterMetrics
from gputui.sources.xids import XidTracker
from tests.sources.helpers import NODES, NS, seed_gpu_nodes

FAULTS = ["status:503~/proxy/metrics", "status:400~/proxy/metrics", "exporter-garbage"]


class CountingClock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _scrapes(log: list[tuple[str, str]]) -> int:
    return sum(1 for _, path in log if "/proxy/metrics" in path)


def _http(cluster: EmulatedCluster, tmp_path: object) -> KubeHttp:
    from pathlib import Path

    path = cluster.write_kubeconfig(Path(str(tmp_path)) / "kc")
    return KubeHttp(load_target(str(path)).configuration)


def _per_minute(log: list[tuple[str, str]], step: float, clock: CountingClock,
                read: object) -> list[int]:
    minutes = []
    for _minute in range(10):
        before = _scrapes(log)
        for _ in range(int(60 / step)):
            read()  # type: ignore[operator]
            clock.now += step
        minutes.append(_scrapes(log) - before)
    return minutes


@pytest.mark.parametrize("fault", FAULTS)
def test_the_metrics_feed_backs_off_per_exporter(
        request_log: list[tuple[str, str]], api_only: EmulatedCluster, tmp_path: object,
        fault: str) -> None:
    seed_gpu_nodes(api_only)
    api_only.inject(fault)
    http = _http(api_only, tmp_path)
    clock = CountingClock()
    exporters = ExporterMetrics(http, backoff=TargetBackoff(clock=clock))
    feed = MetricsFeed(exporters=exporters, refresh=2.0, clock=time.time)
    pods = {name: (NS, f"nvidia-dcgm-exporter-{name}") for name in NODES}
    feed.want(MetricsWant(NODES[0], NODES, pods))
    try:
        minutes = _per_minute(request_log, 2.0, clock, feed.read_once)
        # an exporter whose jittered 5-minute wait ends on the last tick is asked now; read
        # again at the same instant, when every one of them is waiting (with the client open:
        # read after close, a due exporter said "the client is closed", 1 run in ~20)
        feed.read_once()
        reading = feed.read_once()
    finally:
        http.close()
    # before: 3 exporters x 30 refreshes = 90 a minute; now a few in the first minute per
    # exporter (10 s, 20 s, 40 s ...), then at most two a minute each, then one in 5 min
    assert minutes[0] <= 4 * len(NODES), minutes
    assert max(minutes[1:]) <= 2 * len(NODES) and sum(minutes[5:]) <= 3 * len(NODES), minutes
    assert reading.origin.error and "asking again in" in reading.origin.error
    assert set(reading.unread) == set(NODES)  # the rows show "?", not their last value


@pytest.mark.parametrize("fault", FAULTS[:2])
def test_the_xid_reader_backs_off_per_exporter_and_says_why(
        request_log: list[tuple[str, str]], api_only: EmulatedCluster, tmp_path: object,
        fault: str) -> None:
    from gputui.sources.oneshot import read_objects

    seed_gpu_nodes(api_only)
    api_only.inject(fault)
    http = _http(api_only, tmp_path)
    clock = CountingClock()
    tracker = XidTracker(http)
    tracker.backoff = TargetBackoff(clock=clock)
    try:
        objects = read_objects(load_target(str(tmp_path) + "/kc"), NS, http=http)
        minutes = _per_minute(request_log, 5.0, clock,
                              lambda: tracker.refresh(objects, clock.now))
    finally:
        http.close()
    assert max(minutes[1:]) <= 2 * len(NODES) and sum(minutes) <= 12 * len(NODES), minutes
    code = fault.split(":")[1].split("~")[0]
    assert tracker.unread.startswith(f"{code} from the pod proxy"), tracker.unread
    assert tracker.unread.endswith(f"on {len(NODES)} of {len(NODES)} exporters")
    assert not tracker.health  # nothing read: unknown, not "no XIDs"


def test_a_failing_prometheus_is_asked_again_in_minutes(
        api_only: EmulatedCluster, tmp_path: object) -> None:
    """The XID reader asked a down Prometheus at every read (then the exporters); now it
    waits 15 s, then twice as long after each failure, up to 5 minutes, and says that
    nothing could be read when no exporter answers either."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from gputui.sources.oneshot import read_objects
    from gputui.sources.prometheus import PrometheusOptions

    asked: list[str] = []

    class Down(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            asked.append(self.path)
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET  # noqa: N815 - the http.server API

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Down)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seed_gpu_nodes(api_only)
    api_only.inject("status:503~/proxy/metrics")
    http = _http(api_only, tmp_path)
    clock = CountingClock()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    tracker = XidTracker(http, PrometheusOptions(url, timeout=5.0))
    tracker.backoff = TargetBackoff(clock=clock)
    tracker.prometheus_backoff = TargetBackoff(first=15.0, clock=clock)
    try:
        objects = read_objects(load_target(str(tmp_path) + "/kc"), NS, http=http)
        for _ in range(120):  # ten minutes, a read every 5 s
            tracker.refresh(objects, clock.now)
            clock.now += 5.0
    finally:
        http.close()
        server.shutdown()
    assert 3 <= len(asked) <= 8, len(asked)  # before: 120
    assert tracker.unread.startswith(f"Prometheus {url}: "), tracker.unread
    assert "503 from the pod proxy on 3 of 3 exporters" in tracker.unread
