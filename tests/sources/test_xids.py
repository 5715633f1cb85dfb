"""XID reading: the exposition format and Prometheus' answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from gputui.sources.errors import SourceError
from gputui.sources.xids import parse_exposition, query_prometheus

METRICS = """# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-a",Hostname="n1"} 0
DCGM_FI_DEV_XID_ERRORS{gpu="3",UUID="GPU-b",Hostname="n1",err_code="79",err_msg="GPU has fallen off the bus"} 79
DCGM_FI_DEV_GPU_UTIL{gpu="3",Hostname="n1"} 97
"""


def test_parse_exposition_keeps_xid_series() -> None:
    series = parse_exposition(METRICS)
    assert [(s["gpu"], s["value"]) for s in series] == [("0", "0"), ("3", "79")]
    assert series[1]["err_msg"] == "GPU has fallen off the bus"


@pytest.fixture
def prometheus() -> Iterator[str]:
    answer = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "gpu": "5", "hostname": "n2",
                    "err_code": "48", "err_msg": "Double Bit ECC Error"},
         "value": [1700000000, "48"]}]}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(answer).encode()
            self.send_response(200 if self.path.startswith("/api/v1/query") else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_prometheus_query(prometheus: str) -> None:
    reading = query_prometheus(prometheus, now=123.0)
    assert reading.origin == "prometheus"
    (event,) = reading.xids["n2"]
    assert (event.gpu, event.xid, event.when) == (5, 48, 123.0)


def test_prometheus_unreachable_is_one_line() -> None:
    with pytest.raises(SourceError, match="cannot query Prometheus"):
        query_prometheus("http://127.0.0.1:9", now=0.0, timeout=2.0)
