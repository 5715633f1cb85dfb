"""A Prometheus that answers with far more than this cluster's series (issue 27: a shared
Thanos answering 600,000 series took ``check`` to 18 s and 828 MB, exit 0, metrics not said
unreadable; a 65 MB answer kept the TUI's CPU at 97%): the answer is read up to a bound set
by the cluster's size, then refused in one line, and the metrics are unknown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.prometheus import AnswerTooBig, PrometheusMetrics, PrometheusOptions
from tests.helpers import GPUTUI_WITH_PEAK, peak_of
from tests.sources.helpers import node

REPO = Path(__file__).resolve().parents[2]
SERIES = 600_000


def _series(index: int) -> bytes:
    labels = {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": str(index % 8),
              "Hostname": f"other-cluster-node-{index // 8}", "UUID": f"GPU-{index:012d}",
              "modelName": "NVIDIA H100 80GB HBM3", "job": "dcgm-exporter"}
    return json.dumps({"metric": labels, "value": [1700000000, "41"]}).encode()


class _Huge(BaseHTTPRequestHandler):
    """Every query answers 600,000 series, streamed as it is made (chunked)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self._chunk(b'{"status":"success","data":{"resultType":"vector","result":[')
            for start in range(0, SERIES, 2000):
                self._chunk(b",".join(_series(i) for i in range(start, start + 2000))
                            + (b"," if start + 2000 < SERIES else b""))
            self._chunk(b"]}}")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader stopped: what this test wants

    do_POST = do_GET  # noqa: N815 - the client may POST a long query

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def huge_prometheus() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Huge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_an_answer_past_the_bound_is_refused_in_bounded_memory(huge_prometheus: str) -> None:
    prometheus = PrometheusMetrics(PrometheusOptions(huge_prometheus, timeout=60), nodes=5)
    tracemalloc.start()
    try:
        with pytest.raises(AnswerTooBig) as raised:
            prometheus.instant("DCGM_FI_DEV_GPU_TEMP", time.time())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        prometheus.close()
    assert str(raised.value) == "Prometheus answer too big (over 16 MB): metrics unknown"
    assert peak < 64 << 20, f"peak {peak >> 20} MB"


def test_check_says_the_metrics_are_unknown(huge_prometheus: str, api_only: EmulatedCluster,
                                            tmp_path: Path) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    kubeconfig = api_only.write_kubeconfig(tmp_path / "kc")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", GPUTUI_WITH_PEAK, "check", "--json", "--kubeconfig", str(kubeconfig),
         "--prometheus-url", huge_prometheus], capture_output=True, text=True, timeout=120,
        check=False, stdin=subprocess.DEVNULL,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")},
             "PYTHONPATH": str(REPO), "HOME": str(tmp_path)})
    took = time.monotonic() - started
    _said, peak = peak_of(result.stderr)
    report = json.loads(result.stdout)
    metrics = [u for u in report["unreadable"] if u["resource"] == "metrics"]
    assert metrics and "Prometheus answer too big" in metrics[0]["reason"], report["unreadable"]
    assert took < 90 and peak < 400 << 20, (took, peak >> 20)
