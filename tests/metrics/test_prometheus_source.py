"""The Prometheus source against a real Prometheus with backfilled history.

Yesterday GPU 0 of node-a raised XID 48 and still reports it; ten minutes ago GPU 1 raised
XID 79. Only the recent one may be warning or worse. node-b is labelled the HEAD exporter's
way (lowercase ``hostname``) and has a failed row remap.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gputui.domain.findings_metrics import xid_node_findings
from gputui.domain.model import Severity
from gputui.sources.errors import SourceError
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.xids import query_prometheus
from tests.metrics.prom import Backfill, Prometheus, start_prometheus

pytestmark = pytest.mark.prometheus

STEP = 60.0
#: when the history was written (set by the fixture: collection may be minutes earlier,
#: and the newest sample must be within Prometheus' 5 min staleness of the queries)
CLOCK = {"now": time.time()}


def _points(value: float, start: float | None = None,
            end: float | None = None) -> list[tuple[float, float]]:
    now = CLOCK["now"]
    start = now - 26 * 3600 if start is None else start  # yesterday
    end = now - 30 if end is None else end
    count = int((end - start) // STEP)
    return [(start + i * STEP, value) for i in range(count + 1)]


def _gpu(host_label: str, host: str, gpu: int, **extra: str) -> dict[str, str]:
    return {"gpu": str(gpu), "UUID": f"GPU-{host}-{gpu}", "modelName": "NVIDIA H100 80GB HBM3",
            host_label: host, **extra}


def history() -> list[Backfill]:
    a0, a1 = _gpu("Hostname", "node-a", 0), _gpu("Hostname", "node-a", 1)
    b0 = _gpu("hostname", "node-b", 0)
    recent = CLOCK["now"] - 600
    busy = {"namespace": "ml", "pod": "trainer-0"}
    series: list[Backfill] = [
        ("DCGM_FI_DEV_XID_ERRORS", {**a0, "err_code": "48", "err_msg": "Double Bit ECC Error"},
         _points(48)),
        ("DCGM_FI_DEV_XID_ERRORS", {**a1, "err_code": "0", "err_msg": "No Error"},
         _points(0, end=recent - STEP)),
        ("DCGM_FI_DEV_XID_ERRORS", {**a1, "err_code": "79",
                                    "err_msg": "GPU has fallen off the bus"},
         _points(79, start=recent)),
        ("DCGM_FI_DEV_XID_ERRORS", {**b0, "err_code": "0", "err_msg": "No Error"}, _points(0)),
        ("DCGM_FI_DEV_ROW_REMAP_FAILURE", b0, _points(1)),
        ("DCGM_FI_DEV_ROW_REMAP_FAILURE", a0, _points(0)),
    ]
    for labels, util, temp in ((a0, 98.0, 71.0), (a1, 98.0, 83.0), (b0, 0.0, 30.0)):
        pod = busy if util else {}
        series += [
            ("DCGM_FI_DEV_GPU_UTIL", {**labels, **pod}, _points(util)),
            ("DCGM_FI_DEV_GPU_TEMP", {**labels, **pod}, _points(temp)),
            ("DCGM_FI_DEV_FB_USED", {**labels, **pod}, _points(60000 if util else 0)),
            ("DCGM_FI_DEV_FB_FREE", {**labels, **pod}, _points(21000 if util else 81000)),
            ("DCGM_FI_DEV_POWER_USAGE", {**labels, **pod}, _points(610 if util else 70)),
            ("DCGM_FI_DEV_SM_CLOCK", {**labels, **pod}, _points(1980 if util else 345)),
        ]
    return series


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    CLOCK["now"] = time.time()
    server = start_prometheus(Path(tmp_path_factory.mktemp("prom")), backfill=history())
    yield server
    server.stop()


@pytest.fixture
def source(prometheus: Prometheus) -> Iterator[PrometheusMetrics]:
    reader = PrometheusMetrics(PrometheusOptions(prometheus.url))
    yield reader
    reader.close()


def test_xid_ages_come_from_history(source: PrometheusMetrics) -> None:
    """Only the XID from ten minutes ago is warning or worse; yesterday's is info."""
    now = time.time()
    xids = source.xids(now, 3600.0)
    old, recent = xids["node-a"]
    assert (old.gpu, old.xid, old.before) == (0, 48, True)
    assert (recent.gpu, recent.xid, recent.before) == (1, 79, False)
    assert abs(recent.when - (CLOCK["now"] - 600)) <= STEP
    findings = {f.subject: f for f in xid_node_findings("node-a", xids["node-a"], now, 3600.0)}
    assert findings["gpu0"].severity is Severity.INFO and "before" in findings["gpu0"].message
    assert findings["gpu1"].severity is Severity.CRITICAL
    assert "10 min ago" in findings["gpu1"].message or "9 min ago" in findings["gpu1"].message
    assert "node-b" not in xids  # err_code "0" is no XID


def test_fleet_figures_in_two_queries(source: PrometheusMetrics) -> None:
    before = source.traffic.queries
    fleet = source.fleet(time.time(), 3600.0)
    assert source.traffic.queries - before == 2
    assert (fleet.gpus, fleet.busy, fleet.idle) == (3, 2, 1)
    assert fleet.avg_util == pytest.approx(196 / 3)  # from the histogram of whole percents
    assert fleet.hottest == ("node-a", 1, 83.0)
    assert fleet.xids_last_hour == 1


def test_on_screen_util_reads_both_host_labels_in_one_query(source: PrometheusMetrics) -> None:
    before = source.traffic.queries
    util = source.node_util(["node-a", "node-b"], time.time())
    assert source.traffic.queries - before == 1 and source.traffic.bytes > 0
    assert util == {"node-a": 98.0, "node-b": 0.0}
    assert source.node_util([], time.time()) == {}


def test_selected_node_history_in_one_range_query(source: PrometheusMetrics) -> None:
    before = source.traffic.queries
    node = source.node("node-a", time.time(), 600.0, 10.0)
    assert source.traffic.queries - before == 1
    gpu0, gpu1 = node.gpus
    assert gpu0.util[-1][1] == 98.0 and len(gpu0.util) >= 50
    assert gpu0.fb_total == 81000.0 and gpu0.pods == ("ml/trainer-0",)
    assert (gpu0.xid, gpu1.xid) == (48, 79)
    lower = source.node("node-b", time.time(), 600.0, 10.0)
    assert [g.gpu for g in lower.gpus] == [0] and lower.gpus[0].temp[-1][1] == 30.0


def test_health_counts_gpus_and_row_remaps(source: PrometheusMetrics) -> None:
    health = source.health(time.time())
    assert health["node-a"].gpus_reported == 2 and health["node-a"].row_remap_failed == ()
    assert health["node-b"].row_remap_failed == (0,)


def test_check_reading_uses_history(prometheus: Prometheus) -> None:
    reading = query_prometheus(prometheus.url, time.time())
    assert reading.origin == "prometheus" and set(reading.xids) == {"node-a"}
    assert reading.health["node-b"].row_remap_failed == (0,)


def test_unreachable_prometheus_is_one_line() -> None:
    reader = PrometheusMetrics(PrometheusOptions("http://127.0.0.1:9", timeout=2.0))
    with pytest.raises(SourceError, match="unreachable") as info:
        reader.fleet(time.time(), 3600.0)
    assert "\n" not in str(info.value)


def test_auth_and_headers_reach_prometheus(prometheus: Prometheus) -> None:
    """Bearer token, basic auth and extra headers, through a checking proxy in front."""
    from tests.metrics.authproxy import AuthProxy

    with AuthProxy(prometheus.url, require={"Authorization": "Bearer s3cret",
                                            "X-Scope-OrgID": "team-a"}) as proxy:
        ok = PrometheusMetrics(PrometheusOptions(proxy.url, token="s3cret",
                                                 headers={"X-Scope-OrgID": "team-a"}))
        assert ok.node_util(["node-a"], time.time()) == {"node-a": 98.0}
        bad = PrometheusMetrics(PrometheusOptions(proxy.url, token="wrong"))
        with pytest.raises(SourceError, match="401"):
            bad.node_util(["node-a"], time.time())
    import base64

    basic = "Basic " + base64.b64encode(b"ops:pw").decode()
    with AuthProxy(prometheus.url, require={"Authorization": basic}) as proxy:
        reader = PrometheusMetrics(PrometheusOptions(proxy.url, username="ops", password="pw"))
        assert reader.node_util(["node-b"], time.time()) == {"node-b": 0.0}


