"""``gputui check`` after a MIG change has succeeded: no false ``gpu-missing``.

Under the default ``single`` strategy GFD's ``nvidia.com/gpu.count`` counts MIG devices
(k8s-device-plugin ``internal/lm/mig-strategy.go``) while the exporter's ``gpu`` label counts
physical GPUs; the check must compare physical with physical, read from the exporters
through the pod proxy and from a real Prometheus scraping them alike. The change is made as
an operator makes it: the ``mig-config-safe`` action over HTTP, waiting for ``success``.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gputui.actions.mig import SafeMigChange
from gputui.check import run_check
from gputui.domain.metrics import MetricsWant
from gputui.settings import Settings
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.scrape import ExporterMetrics
from tests.actions.upgrade.helpers import Cluster, apply, plan_of
from tests.helpers import free_port
from tests.metrics.prom import start_prometheus
from tests.sim.conftest import Sim

T = TypeVar("T")
#: healthy's A100 pool: 8 GPUs a node, ``single`` strategy (the Helm default)
NODE = "a100/0"
#: healthy after the change: 4 H100 x 8 + 2 A100 x 8 whole GPUs, and 8 x 7 MIG devices
TOTAL, MIG = 104, 56


def _change(sim: Sim, tmp_path: Path, config: str) -> tuple[Cluster, str]:
    """Apply ``config`` to one A100 node by the safe path (its GPU pods drained)."""
    cluster = Cluster(sim, tmp_path)
    node = sim.node(NODE)
    sim.wait_for(lambda: node in cluster.snapshot().mig.nodes, 300, "the MIG view of the node")
    action = SafeMigChange()
    action.poll_seconds = 0.05
    action.apply_timeout = 120.0
    plan = plan_of(action, cluster, [node], {"config": config, "gpu_pods": "drain"})
    result, _ = apply(action, plan, cluster)
    assert result.ok, (result.summary, result.error)
    assert cluster.labels(node)["nvidia.com/mig.config.state"] == "success"
    return cluster, node


def _check(settings: Settings) -> tuple[int, dict[str, Any], str]:
    """(exit code, the JSON report, the table's header line naming the metrics source)."""
    out, err, table = io.StringIO(), io.StringIO(), io.StringIO()
    code = run_check(settings, as_json=True, out=out, err=err)
    run_check(settings, out=table, err=err)
    assert err.getvalue() == ""
    return code, json.loads(out.getvalue()), table.getvalue().splitlines()[0]


def _until(read: Callable[[], T], ok: Callable[[T], bool], what: str) -> T:
    """Read until ``ok`` (60 s at most); the last reading goes into the failure."""
    deadline = time.monotonic() + 60
    while True:
        value = read()
        if ok(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not reached: {what}; last {value}")
        time.sleep(0.3)


def _bad(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["message"]) for f in report["findings"]
            if f["severity"] in ("warning", "critical")]


def test_check_after_mig_change_under_single_reads_exporters(start_sim: Any,
                                                             tmp_path: Path) -> None:
    """``all-1g.10gb`` gives 56 MIG devices (``gpu.count=56``) on 8 GPUs; the exporters
    report the 8 GPUs' 56 instances: exit 0, nothing missing. Before, it was
    ``crit gpu-missing: metrics report 8 of the node's 56 GPUs``."""
    sim: Sim = start_sim("healthy", speed=100)
    cluster, node = _change(sim, tmp_path, "all-1g.10gb")
    # GFD relabels on its next pass: gpu.count then counts the MIG devices
    sim.wait_for(lambda: cluster.labels(node).get("nvidia.com/gpu.count") == "56", 300,
                 "GFD's gpu.count=56")
    assert cluster.labels(node)["nvidia.com/gpu.product"].endswith("-MIG-1g.10gb")
    code, report, header = _check(Settings(kubeconfig=str(cluster.kubeconfig)))
    assert "metrics: dcgm-exporter scrape" in header
    assert _bad(report) == [] and code == 0
    assert "gpu-missing" not in {f["code"] for f in report["findings"]}
    # the fleet line counts what the header counts: whole GPUs and MIG devices
    counts = cluster.snapshot().counts
    assert (counts.gpus_total, counts.mig_devices) == (TOTAL, MIG)
    pods = sim.core.list_namespaced_pod("gpu-operator",
                                        label_selector="app=nvidia-dcgm-exporter").items
    exporters = {p.spec.node_name: ("gpu-operator", p.metadata.name) for p in pods}
    http = KubeHttp(load_target(str(cluster.kubeconfig)).configuration)
    feed = MetricsFeed(exporters=ExporterMetrics(http), clock=time.time)
    feed.want(MetricsWant(None, tuple(sorted(exporters)), exporters))
    try:  # a scrape that times out on a loaded machine leaves its node out: read again
        scraped = _until(feed.read_once, lambda r: r.fleet is not None and
                         r.fleet.gpus == TOTAL and not r.origin.error, "every node scraped")
    finally:
        feed.stop()
    assert scraped.origin.kind == "exporter" and scraped.fleet is not None
    assert (scraped.fleet.gpus, scraped.fleet.mig_devices) == (TOTAL, MIG)


@pytest.mark.prometheus
def test_check_after_mig_change_under_single_reads_prometheus(start_sim: Any,
                                                              tmp_path: Path) -> None:
    """The same change with a real Prometheus scraping the emulated exporters: its
    ``count by (Hostname, gpu)`` sees 8 physical GPUs behind the 56 instances."""
    sim: Sim = start_sim("healthy", speed=100, exporters_port=free_port())
    server = start_prometheus(tmp_path / "prom",
                              scrape_sd=f"http://127.0.0.1:{sim.cluster.exporters_port}/sd")
    try:
        cluster, node = _change(sim, tmp_path, "all-1g.10gb")
        sim.wait_for(lambda: cluster.labels(node).get("nvidia.com/gpu.count") == "56", 300,
                     "GFD's gpu.count=56")
        instances = (f'count(DCGM_FI_DEV_GPU_TEMP{{Hostname="{node}", GPU_I_ID!=""}})')
        deadline = time.monotonic() + 60
        while not any(r.get("value", [0, "0"])[1] == "56" for r in server.query(instances)):
            if time.monotonic() > deadline:
                pytest.fail("Prometheus never scraped the node's 56 MIG instances")
            time.sleep(0.3)
        settings = Settings(kubeconfig=str(cluster.kubeconfig), prometheus_url=server.url)
        code, report, header = _check(settings)
        assert f"metrics: Prometheus {server.url}" in header
        assert _bad(report) == [] and code == 0
        prometheus = PrometheusMetrics(PrometheusOptions(server.url))
        # a scrape that timed out on a loaded machine leaves a node out for a second
        fleet = _until(lambda: prometheus.fleet(time.time(), 3600.0),
                       lambda f: f.gpus == TOTAL, "every exporter scraped")
        counts = cluster.snapshot().counts
        assert (fleet.gpus, fleet.mig_devices) == (counts.gpus_total, counts.mig_devices)
        assert (fleet.gpus, fleet.mig_devices) == (TOTAL, MIG)
    finally:
        server.stop()


ALL_ENABLED = """summary: A100 nodes under {strategy}, one H100 node
clusterPolicy:
  spec:
    mig: {{strategy: {strategy}}}
nodePools:
  - {{name: a100, prefix: gke-test-a100-pool-2b9c, count: 2, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}}
  - {{name: h100, prefix: gke-test-h100-pool-7f3a, count: 1, gpu: H100-80GB, gpusPerNode: 8}}
"""


@pytest.mark.parametrize("strategy", ["mixed", "single"])
def test_check_after_all_enabled_says_once_why_no_gpu_can_be_allocated(
        start_sim: Any, tmp_path: Path, strategy: str) -> None:
    """``all-enabled`` turns MIG on with no instance. Upstream leaves the node without a GPU
    resource (k8s-device-plugin ``internal/rm/device_map.go``: nothing for a MIG-enabled GPU
    without MIG devices, under single an error and the plugin exits) and the validator's
    ``plugin-validation`` fails (gpu-operator ``cmd/nvidia-validator/main.go``,
    ``validateGPUResource``), so the ClusterPolicy stays notReady: one warning,
    ``mig-no-instances``, on the node; the ClusterPolicy's notReady is blamed on it. The
    exporter reports the GPUs whole (``--devices f``): no ``gpu-missing``. Before: under
    mixed ``cluster-policy-not-ready`` with nothing saying why, under single
    ``mig-config-failed`` although mig-manager reported success."""
    scenario = tmp_path / f"{strategy}.yaml"
    scenario.write_text(ALL_ENABLED.format(strategy=strategy))
    sim: Sim = start_sim(str(scenario), speed=100)
    cluster, node = _change(sim, tmp_path, "all-enabled")
    sim.wait_for(lambda: cluster.labels(node).get("nvidia.com/gpu.replicas") == "0", 300,
                 "GFD labelling the MIG parents")
    policy = _until(lambda: _check(Settings(kubeconfig=str(cluster.kubeconfig))),
                    lambda r: r[1]["cluster_policy"]["state"] == "notReady",
                    "the validator failing on the node")
    code, report, header = policy
    assert "metrics: dcgm-exporter scrape" in header
    assert [(c, f["node"]) for c, f in _bad_findings(report)] == [("mig-no-instances", node)]
    assert code == 1
    blamed = next(f for f in report["findings"] if f["code"] == "cluster-policy-not-ready")
    assert blamed["severity"] == "info" and f"mig-no-instances on {node}" in blamed["message"]
    mine = {f["code"] for f in report["findings"] if f["node"] == node}
    assert not mine & {"gpu-missing", "mig-config-failed"}, report["findings"]


def _bad_findings(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(f["code"], f) for f in report["findings"] if f["severity"] in ("warning", "critical")]
