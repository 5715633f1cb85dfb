"""A real Prometheus scrapes the emulated exporters through HTTP service discovery."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port

pytestmark = pytest.mark.prometheus


def _query(port: int, promql: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        body = json.loads(urllib.request.urlopen(url, timeout=5).read())
    except OSError:
        return []
    return list(body.get("data", {}).get("result", []))


def test_prometheus_scrapes_dcgm_series(start_sim: Any, tmp_path: Path) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("prometheus not found (Debian package prometheus)")
    exporters = free_port()
    web = free_port()
    while web == exporters:  # a port just released may be handed out again
        web = free_port()
    sim = start_sim("xid-storm", speed=20, exporters_port=exporters)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: dcgm-exporter\n"
        f"    http_sd_configs: [{{url: 'http://127.0.0.1:{exporters}/sd', refresh_interval: 1s}}]\n")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{web}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        series: list[dict[str, Any]] = []
        fallen: list[dict[str, Any]] = []
        while time.monotonic() < deadline and (len(series) != 31 or not fallen):
            series = _query(web, "DCGM_FI_DEV_GPU_UTIL")
            fallen = _query(web, 'DCGM_FI_DEV_XID_ERRORS{err_code="79"}')
            time.sleep(0.5)
        # 4 nodes x 8 GPUs, less the one that fell off the bus: only its XID series is left
        assert len(series) == 31
        assert [s["metric"]["gpu"] for s in fallen] == ["3"]
        nodes = {s["metric"]["Hostname"] for s in series}
        assert nodes == set(sim.operator.world.pool_members["h100"])
        busy = _query(web, 'DCGM_FI_DEV_GPU_UTIL{namespace="ml-training"} > 50')
        assert busy and all(s["metric"]["pod"].startswith("trainer-llama-") for s in busy)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
