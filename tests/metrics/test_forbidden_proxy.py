"""A viewer without ``get pods/proxy``: one refused scrape, then minutes of quiet, said once.

The emulated server refuses the pod proxy as a real one does (``--deny get:pods/proxy``:
403 with the RBAC sentence). The metrics feed reads every 2 s (the default refresh); its
clock here is a fast one, 2 s per read, so 10 minutes pass in 300 reads, and the server's
request log counts every scrape attempt. Before the back-off: 4 exporters x 300 reads.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from gputui.demo import _exporter_objects
from gputui.domain.metrics import MetricsWant
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.retry import ForbiddenGate
from gputui.sources.scrape import ExporterMetrics
from gputui.sources.xids import XidTracker
from gputui.ui.render.metrics import render_metrics
from tests.sim.conftest import Sim

MESSAGE = "metrics: forbidden (pods/proxy)"


class FastClock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _setup(start_sim: Any, tmp_path: Path) -> tuple[KubeHttp, MetricsWant]:
    sim: Sim = start_sim("healthy", speed=20, deny="get:pods/proxy")
    http = KubeHttp(load_target(str(sim.cluster.write_kubeconfig(
        tmp_path / "kubeconfig"))).configuration)
    pods = sim.wait_for(lambda: [p for p in sim.core.list_namespaced_pod(
        "gpu-operator", label_selector="app=nvidia-dcgm-exporter").items
        if p.status.phase == "Running"] or None, 600, "exporters running")
    exporters = {p.spec.node_name: ("gpu-operator", p.metadata.name) for p in pods}
    return http, MetricsWant(min(exporters), tuple(sorted(exporters)), exporters)


def test_a_forbidden_pod_proxy_is_asked_again_in_minutes_and_said_once(
        request_log: list[tuple[str, str]], start_sim: Any, tmp_path: Path) -> None:
    http, want = _setup(start_sim, tmp_path)
    clock = FastClock()
    feed = MetricsFeed(exporters=ExporterMetrics(http, gate=ForbiddenGate(
        MESSAGE, clock=clock)), refresh=2.0, clock=time.time)
    feed.want(want)
    per_minute: list[int] = []
    try:
        for _minute in range(10):
            before = sum(1 for _, path in request_log if "/proxy/" in path)
            for _read in range(30):  # a read every 2 s
                reading = feed.read_once()
                clock.now += 2.0
            per_minute.append(sum(1 for _, path in request_log if "/proxy/" in path) - before)
    finally:
        http.close()
    assert len(want.exporters) >= 2  # several exporters on screen, yet one probe each time
    assert max(per_minute) < 10 and sum(per_minute) <= 3, per_minute
    assert reading.origin.error == f"{MESSAGE}; asking again every 5 min"
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(render_metrics(None, "gpu-operator", reading))
    assert console.export_text().count(MESSAGE) == 1  # one line, not one per node


def test_the_xid_reader_backs_off_too(request_log: list[tuple[str, str]], start_sim: Any,
                                      tmp_path: Path) -> None:
    http, _ = _setup(start_sim, tmp_path)
    tracker = XidTracker(http)
    try:
        objects = _exporter_objects(http)
        for _ in range(5):
            tracker.refresh(objects, time.time())
    finally:
        http.close()
    assert sum(1 for _, path in request_log if "/proxy/" in path) == 1
    assert tracker.gate.message().startswith(MESSAGE)


def test_check_says_the_pod_proxy_is_forbidden_after_one_refused_scrape(
        request_log: list[tuple[str, str]], start_sim: Any, tmp_path: Path) -> None:
    from gputui.check import run_check
    from gputui.settings import Settings

    sim: Sim = start_sim("healthy", speed=20, deny="get:pods/proxy")
    sim.wait_for(lambda: [p for p in sim.core.list_namespaced_pod(
        "gpu-operator", label_selector="app=nvidia-dcgm-exporter").items
        if p.status.phase == "Running"] or None, 600, "exporters running")
    out, err = io.StringIO(), io.StringIO()
    run_check(Settings(kubeconfig=str(sim.cluster.write_kubeconfig(tmp_path / "kc"))),
              out=out, err=err)
    assert "(forbidden (pods/proxy))" in out.getvalue().splitlines()[0]
    assert sum(1 for _, path in request_log if "/proxy/" in path) == 1
