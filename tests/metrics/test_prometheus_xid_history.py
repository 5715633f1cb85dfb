"""XIDs from a real Prometheus: the worst of the lookback, never just the current gauge.

dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` is a gauge of the last XID, one series per
``err_code``. Backfilled with ``promtool tsdb create-blocks-from openmetrics`` (15 s scrapes):

- node-a GPU 0 reported XID 95 six minutes ago and XID 45 fifteen seconds later, and
  ``ml/trainer-0`` runs on it: critical, naming 95, the 45 after it and the pod;
- node-b GPU 1 did the same two hours ago: outside the lookback, info;
- node-c GPU 2 reported only XID 45: info;
- node-d (``--use-old-namespace`` labels) reported XID 154 asking for a node reboot;
- node-e's gauge says 45, but the opt-in ``DCGM_EXP_XID_ERRORS_COUNT`` counted a 79 that
  no scrape of the gauge caught.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.check import run_check

from gputui.domain.findings_metrics import xid_node_findings
from gputui.domain.model import Finding, Severity
from gputui.settings import Settings
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from tests.metrics.prom import Backfill, Prometheus, start_prometheus
from tests.sim.conftest import Sim

pytestmark = pytest.mark.prometheus

SCRAPE = 15.0
CLOCK = {"now": time.time()}
XID = "DCGM_FI_DEV_XID_ERRORS"
POD = {"namespace": "ml", "pod": "trainer-0", "container": "main"}
OLD_POD = {"pod_namespace": "ml", "pod_name": "trainer-7", "container_name": "main"}
REBOOT = "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"


def _every(start: float, end: float, value: float) -> list[tuple[float, float]]:
    """One sample per scrape from ``start`` (seconds before the fixture's clock) to ``end``."""
    now = CLOCK["now"]
    count = int((start - end) // SCRAPE)
    return [(now - start + i * SCRAPE, value) for i in range(count + 1)]


def _gpu(node: str, gpu: int, **extra: str) -> dict[str, str]:
    return {"gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}", "Hostname": node, **extra}


def _xid(node: str, gpu: int, code: int, msg: str, start: float, end: float,
         **extra: str) -> Backfill:
    return (XID, {**_gpu(node, gpu, **extra), "err_code": str(code), "err_msg": msg},
            _every(start, end, code))


def history() -> list[Backfill]:
    fatal, cleanup = "Uncontained ECC error", "Preemptive cleanup, due to previous errors"
    return [
        _xid("node-a", 0, 0, "No Error", 3 * 3600, 375),
        _xid("node-a", 0, 95, fatal, 360, 360, **POD),  # one scrape only, then 45
        _xid("node-a", 0, 45, cleanup, 345, 30, **POD),
        ("DCGM_FI_DEV_GPU_UTIL", _gpu("node-a", 0, **POD), _every(3 * 3600, 30, 0.0)),
        _xid("node-b", 1, 95, fatal, 2 * 3600, 2 * 3600 - 15),
        _xid("node-b", 1, 45, cleanup, 2 * 3600 - 15, 30),
        _xid("node-c", 2, 45, cleanup, 300, 30),
        _xid("node-d", 3, 154, REBOOT, 600, 30, **OLD_POD),
        _xid("node-e", 4, 45, cleanup, 280, 30),
        ("DCGM_EXP_XID_ERRORS_COUNT",
         {**_gpu("node-e", 4), "xid": "79", "window_size_in_ms": "300000"},
         _every(300, 30, 1.0)),
    ]


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    CLOCK["now"] = time.time()
    server = start_prometheus(Path(tmp_path_factory.mktemp("prom")), backfill=history())
    yield server
    server.stop()


@pytest.fixture(scope="module")
def findings(prometheus: Prometheus) -> dict[str, Finding]:
    reader = PrometheusMetrics(PrometheusOptions(prometheus.url))
    try:
        now = time.time()
        before = reader.traffic.queries
        xids = reader.xids(now, 3600.0)
        assert reader.traffic.queries - before == 2  # whatever the size of the fleet
    finally:
        reader.close()
    found = {}
    for node, events in xids.items():
        [finding] = xid_node_findings(node, events, now, 3600.0)
        found[node] = finding
    return found


def test_fatal_xid_masked_by_a_later_45_is_critical_and_named(
        findings: dict[str, Finding]) -> None:
    x = findings["node-a"]
    assert x.severity is Severity.CRITICAL and x.subject == "gpu0"
    assert x.message.startswith("GPU 0: XID 95 (uncontained ECC error")
    assert ", then 45" in x.message and "pods: ml/trainer-0" in x.message
    assert "6 min ago" in x.message or "5 min ago" in x.message
    assert "reset the GPU" in x.hint
    # the controls: the same two hours ago is outside the lookback, and 45 alone is info
    old = findings["node-b"]
    assert old.severity is Severity.INFO and "XID 45" in old.message and "95" not in old.message
    assert findings["node-c"].severity is Severity.INFO


def test_xid_154_says_its_recovery_action_and_old_namespace_pods(
        findings: dict[str, Finding]) -> None:
    x = findings["node-d"]
    assert x.severity is Severity.CRITICAL and "XID 154" in x.message
    assert "reboot the node" in x.message and "pods: ml/trainer-7" in x.message
    assert "reboot" in x.hint


def test_an_xid_only_the_exporters_counter_saw_is_graded(findings: dict[str, Finding]) -> None:
    x = findings["node-e"]
    assert x.severity is Severity.CRITICAL and "XID 79" in x.message
    assert ", then 45" in x.message or "XID 45" not in x.message


def test_check_json_through_prometheus_names_the_masked_95(start_sim: Any, tmp_path: Path
                                                            ) -> None:
    """``gputui check --json`` on an emulated cluster whose Prometheus holds the history."""
    sim: Sim = start_sim("healthy", speed=20)
    node = sim.node("h100/0")
    CLOCK["now"] = time.time()
    server = start_prometheus(tmp_path, backfill=[
        _xid(node, 0, 95, "Uncontained ECC error", 360, 360, **POD),
        _xid(node, 0, 45, "Preemptive cleanup", 345, 30, **POD)])
    try:
        settings = Settings(kubeconfig=str(sim.cluster.write_kubeconfig(tmp_path / "kc")),
                            prometheus_url=server.url)
        out, err = io.StringIO(), io.StringIO()
        assert run_check(settings, as_json=True, out=out, err=err) == 1, err.getvalue()
    finally:
        server.stop()
    [x] = [f for f in json.loads(out.getvalue())["findings"] if f["code"] == "xid-error"]
    assert x["node"] == node and x["severity"] == "critical"
    assert x["message"].startswith("GPU 0: XID 95 (uncontained ECC error")
    assert "then 45; pods: ml/trainer-0" in x["message"]
