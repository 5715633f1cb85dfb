"""The metrics feed live on the emulated cluster: Prometheus scraping the emulated exporters,
then Prometheus stopped mid-run (the feed falls back to the pod proxy and says so), and the
exporter scrape alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.domain.metrics import MetricsReading, MetricsWant
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.scrape import ExporterMetrics
from tests.helpers import free_port
from tests.metrics.prom import start_prometheus
from tests.sim.conftest import Sim


def _http(sim: Sim, tmp: Path) -> KubeHttp:
    path = sim.cluster.write_kubeconfig(tmp / "kubeconfig")
    return KubeHttp(load_target(str(path)).configuration)


def _want(sim: Sim, selected: str) -> MetricsWant:
    pods = sim.core.list_namespaced_pod("gpu-operator",
                                        label_selector="app=nvidia-dcgm-exporter").items
    exporters = {p.spec.node_name: ("gpu-operator", p.metadata.name) for p in pods
                 if p.status.phase == "Running"}
    visible = tuple(sorted(exporters))
    return MetricsWant(selected, visible, exporters)


def _until(feed: MetricsFeed, ok: Any, what: str, timeout: float = 60) -> MetricsReading:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reading = feed.read_once()
        if ok(reading):
            return reading
        time.sleep(0.3)
    pytest.fail(f"not reached: {what}; last {feed.last.origin}")


@pytest.fixture
def trainer_node(start_sim: Any) -> Iterator[tuple[Sim, str]]:
    sim = start_sim("xid-storm", speed=20, exporters_port=free_port())
    node = sim.wait_for(lambda: next(
        (p.spec.node_name for p in sim.core.list_namespaced_pod(
            "ml-training", label_selector="app=trainer").items if p.spec.node_name), None),
        600, "a trainer pod scheduled")
    yield sim, node


@pytest.mark.prometheus
def test_prometheus_then_fallback_to_exporters(trainer_node: tuple[Sim, str],
                                               tmp_path: Path) -> None:
    sim, node = trainer_node
    server = start_prometheus(tmp_path, scrape_sd=f"http://127.0.0.1:{sim.cluster.exporters_port}/sd")
    http = _http(sim, tmp_path)
    feed = MetricsFeed(prometheus=PrometheusMetrics(PrometheusOptions(server.url, timeout=2.0)),
                       exporters=ExporterMetrics(http), refresh=1.0, clock=time.time)
    try:
        feed.want(_want(sim, node))
        # Prometheus scrapes each exporter on its own schedule: until it has scraped the
        # node's, the fleet and utilisation queries may not cover it yet
        live = _until(feed, lambda r: r.origin.kind == "prometheus" and r.node is not None
                      and r.node.gpus and r.node.gpus[0].util and r.fleet is not None
                      and r.fleet.gpus > 0 and node in r.node_util,
                      "Prometheus answers with the node's GPUs")
        assert live.node is not None and live.fleet is not None
        busy = [g for g in live.node.gpus if g.util and g.util[-1][1] > 50]
        assert busy and all(any(p.startswith("ml-training/trainer") for p in g.pods)
                            for g in busy)
        assert live.fleet.busy >= len(busy) and node in live.node_util
        server.stop()  # Prometheus dies mid-run
        fallen = feed.read_once()
        assert fallen.origin.kind == "exporter" and fallen.origin.since > 0
        assert fallen.origin.fallback.startswith("Prometheus unreachable")
        assert fallen.node is not None and fallen.node.node == node
        second = feed.read_once()  # Prometheus is not retried at every refresh
        assert second.origin.kind == "exporter" and second.origin.since == fallen.origin.since
    finally:
        server.stop()
        feed.stop()
        http.close()


def test_exporter_scrape_alone_keeps_history_for_what_is_on_screen(
        trainer_node: tuple[Sim, str], tmp_path: Path) -> None:
    sim, node = trainer_node
    http = _http(sim, tmp_path)
    scraper = ExporterMetrics(http)
    feed = MetricsFeed(exporters=scraper, refresh=1.0, clock=time.time)
    try:
        want = _want(sim, node)
        feed.want(MetricsWant(node, (node,), want.exporters))
        reading = _until(feed, lambda r: r.node is not None and r.node.gpus
                         and len(r.node.gpus[0].util) >= 3, "three samples of history")
        assert reading.origin.kind == "exporter" and reading.origin.fallback == ""
        assert reading.origin.where == "API server pod proxy"
        assert scraper.scrapes >= 3 and set(reading.node_util) == {node}
        assert reading.fleet is not None and reading.fleet.scope == "1 node on screen"
        other = next(n for n in want.exporters if n != node)
        feed.want(MetricsWant(None, (other,), want.exporters))
        later = feed.read_once()
        assert set(later.node_util) == {other} and later.node is None
        lost = feed.read_once()
        gone = MetricsWant("no-such-node", (), {})
        feed.want(gone)
        assert "no running dcgm-exporter" in feed.read_once().origin.error
        assert lost.origin.kind == "exporter"
    finally:
        feed.stop()
        http.close()


def test_no_fleet_figures_when_no_exporter_on_screen_answers(
        trainer_node: tuple[Sim, str], tmp_path: Path) -> None:
    """Every scrape on screen failing is not "0 busy, 0 XIDs in 1 h": the fleet line is left
    out and the reading says why."""
    sim, node = trainer_node
    http = _http(sim, tmp_path)
    feed = MetricsFeed(exporters=ExporterMetrics(http), refresh=1.0, clock=time.time)
    try:
        namespace, _ = _want(sim, node).exporters[node]
        feed.want(MetricsWant(None, (node,), {node: (namespace, "no-such-exporter-pod")}))
        reading = feed.read_once()
        assert reading.fleet is None and reading.origin.kind == "exporter"
        assert "dcgm-exporter unreachable on all 1 node on screen" in reading.origin.error
        feed.want(_want(sim, node))
        assert feed.read_once().fleet is not None  # and back once one answers
    finally:
        feed.stop()
        http.close()


def test_the_fleet_line_says_how_many_of_the_nodes_on_screen_it_covers(
        trainer_node: tuple[Sim, str], tmp_path: Path) -> None:
    """Issue 29, item 10: with five rows shown and one exporter answering, the fleet line
    said "1 nodes on screen" (the nodes scraped, not those shown): it says "1 of 5"."""
    sim, node = trainer_node
    http = _http(sim, tmp_path)
    feed = MetricsFeed(exporters=ExporterMetrics(http), refresh=1.0, clock=time.time)
    try:
        exporters = _want(sim, node).exporters
        shown = (node, "gpu-no-exporter-1", "gpu-no-exporter-2", "gpu-no-exporter-3",
                 "gpu-no-exporter-4")  # rows whose driver is down run no dcgm-exporter
        feed.want(MetricsWant(None, shown, {node: exporters[node]}))
        reading = feed.read_once()
        assert reading.fleet is not None and reading.fleet.scope == "1 of 5 nodes on screen"
    finally:
        feed.stop()
        http.close()
