"""Prometheus answering values that are not numbers: the metrics fall back, and say why.

A real Prometheus with a few GPU series, behind a proxy that replaces every sample value
with "abc". The TUI's metrics feed once stopped for good on the first such answer ("no
metrics source" forever, nothing logged); ``gputui check`` ended in ``internal error``.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.check import run_check
from gputui.domain.metrics import MetricsReading, MetricsWant
from gputui.settings import Settings
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.scrape import ExporterMetrics
from tests.metrics.prom import Backfill, Prometheus, start_prometheus
from tests.metrics.tamper import TamperProxy, values_to
from tests.sim.conftest import Sim

pytestmark = pytest.mark.prometheus


def _history(node: str) -> list[Backfill]:
    now = time.time()
    points = [(now - 600 + 60 * i, 40.0) for i in range(10)]
    labels = {"gpu": "0", "Hostname": node, "err_code": "0"}
    return [("DCGM_FI_DEV_GPU_UTIL", labels, points), ("DCGM_FI_DEV_GPU_TEMP", labels, points),
            ("DCGM_FI_DEV_XID_ERRORS", labels, [(t, 0.0) for t, _ in points])]


@pytest.fixture
def garbage(start_sim: Any, tmp_path: Path) -> Iterator[tuple[Sim, Prometheus, TamperProxy]]:
    sim: Sim = start_sim("healthy", speed=20)
    server = start_prometheus(tmp_path, backfill=_history(sim.node("h100/0")))
    try:
        with TamperProxy(server.url, values_to("abc")) as proxy:
            yield sim, server, proxy
    finally:
        server.stop()


def test_the_feed_falls_back_to_the_exporters_and_keeps_running(
        garbage: tuple[Sim, Prometheus, TamperProxy], tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    sim, _, proxy = garbage
    http = KubeHttp(load_target(str(sim.cluster.write_kubeconfig(
        tmp_path / "kubeconfig"))).configuration)
    node = sim.node("h100/0")
    pods = sim.wait_for(lambda: [p for p in sim.core.list_namespaced_pod(
        "gpu-operator", label_selector="app=nvidia-dcgm-exporter").items
        if p.status.phase == "Running" and p.spec.node_name == node] or None, 600,
        "the node's exporter running")
    feed = MetricsFeed(prometheus=PrometheusMetrics(PrometheusOptions(proxy.url)),
                       exporters=ExporterMetrics(http), refresh=0.2)
    feed.want(MetricsWant(node, (node,), {node: ("gpu-operator", pods[0].metadata.name)}))
    readings: list[MetricsReading] = []
    caplog.set_level(logging.INFO, logger="gputui.sources")
    feed.start(readings.append)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                r.node is not None and r.node.gpus for r in readings):
            time.sleep(0.1)
        count = len(readings)
        # still reading after the garbage (polled: a loaded machine spaces the 0.2 s reads)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(readings) <= count:
            time.sleep(0.1)
        assert feed._thread is not None and feed._thread.is_alive()
        assert len(readings) > count
    finally:
        feed.stop()
        http.close()
    last = readings[-1]
    assert proxy.queries >= 1
    assert last.origin.kind == "exporter" and last.node is not None and last.node.gpus
    assert last.origin.fallback.startswith(f"Prometheus answer unreadable (Prometheus "
                                           f"{proxy.url}: unreadable answer: sample value "
                                           "'abc' is not a number)")
    assert "unreadable answer" in caplog.text  # the debug log says it too


def test_check_reads_the_exporters_and_says_why(
        garbage: tuple[Sim, Prometheus, TamperProxy], tmp_path: Path) -> None:
    sim, _, proxy = garbage
    kubeconfig = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")
    out, err = io.StringIO(), io.StringIO()
    code = run_check(Settings(kubeconfig=str(kubeconfig), prometheus_url=proxy.url),
                     out=out, err=err)
    header = out.getvalue().splitlines()[0]
    assert err.getvalue() == "" and code in (0, 1)
    assert "unreadable answer: sample value 'abc' is not a number" in header
    assert "read from exporters" in header
