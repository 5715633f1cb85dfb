"""``gputui check`` reads the same metrics as the TUI and names its source in the header."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from gputui.check import run_check
from gputui.settings import Settings
from tests.metrics.prom import Backfill, start_prometheus
from tests.sim.conftest import Sim


def _series(node: str, gpu: int, code: int, start: float, end: float) -> Backfill:
    labels = {"gpu": str(gpu), "Hostname": node, "err_code": str(code),
              "err_msg": "Double Bit ECC Error" if code == 48 else "GPU has fallen off the bus"}
    points = [(t, float(code)) for t in range(int(start), int(end), 60)]
    return ("DCGM_FI_DEV_XID_ERRORS", labels, points)


def _run(settings: Settings) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_check(settings, out=out, err=err)
    assert err.getvalue() == ""
    return code, out.getvalue()


@pytest.mark.prometheus
def test_check_with_prometheus_grades_xids_by_age(start_sim: Any, tmp_path: Path) -> None:
    sim: Sim = start_sim("healthy", speed=20)
    old_node, new_node = sim.node("h100/0"), sim.node("h100/1")
    now = time.time()
    server = start_prometheus(tmp_path, backfill=[
        _series(old_node, 0, 48, now - 26 * 3600, now - 30),  # since yesterday
        _series(new_node, 2, 79, now - 600, now - 30),  # ten minutes ago
    ])
    kubeconfig = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")
    try:
        settings = Settings(kubeconfig=str(kubeconfig), prometheus_url=server.url)
        code, table = _run(settings)
        header = table.splitlines()[0]
        assert f"metrics: Prometheus {server.url}" in header
        assert code == 1
        out = io.StringIO()
        run_check(settings, as_json=True, out=out, err=io.StringIO())
        xids = {f["node"]: f for f in json.loads(out.getvalue())["findings"]
                if f["code"] == "xid-error"}
        assert xids[old_node]["severity"] == "info" and "before" in xids[old_node]["message"]
        assert xids[new_node]["severity"] == "critical"
        server.stop()  # Prometheus gone: the exporters answer and the header says so
        _, fallback = _run(settings)
        assert "dcgm-exporter scrape" in fallback.splitlines()[0]
        assert "read from exporters" in fallback.splitlines()[0]
    finally:
        server.stop()


def test_check_demo_names_the_exporter_source_and_finds_the_missing_gpu() -> None:
    code, table = _run(Settings(demo=True, scenario="xid-storm"))
    header = table.splitlines()[0]
    assert "metrics: dcgm-exporter scrape of 4 node(s) via the pod proxy" in header
    assert code == 1 and "gpu-missing" in table and "7 of the node's 8 GPUs" in table
