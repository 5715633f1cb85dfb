"""XID reading: the exposition format and Prometheus' answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from gputui.domain.inputs import EMPTY_OBJECTS, WHEN_UNKNOWN, XidEvent
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


def _reading(*codes: int) -> Any:
    from gputui.sources.xids import XidReading

    return XidReading({"n1": tuple(XidEvent(gpu=i, xid=code, when=999.0)
                                   for i, code in enumerate(codes))})


def test_one_shot_read_stamps_xids_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """``gputui check`` reads once: it cannot know when an XID happened, so it says so
    (no "0 s ago") instead of stamping the time of the read."""
    from gputui.sources import connect

    asked: list[float] = []

    def fake_read(http: Any, objects: Any, now: float, url: str | None = None) -> Any:
        asked.append(now)
        return _reading(79)

    monkeypatch.setattr(connect, "read_xids", fake_read)
    connect._xids(None, EMPTY_OBJECTS, None)  # type: ignore[arg-type]
    connect._xids(None, EMPTY_OBJECTS, "http://prometheus:9090")  # type: ignore[arg-type]
    assert asked == [WHEN_UNKNOWN, WHEN_UNKNOWN]


def test_live_tracker_stamps_first_read_unknown_then_first_seen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XIDs present at the first read predate gputui: unknown time; later ones: first seen."""
    from gputui.sources import xids

    readings = iter([_reading(79), _reading(79, 48), _reading(79, 48)])
    monkeypatch.setattr(xids, "read_xids", lambda *args: next(readings))
    tracker = xids.XidTracker(None)  # type: ignore[arg-type]
    assert tracker.refresh(EMPTY_OBJECTS, 100.0)
    assert [e.when for e in tracker.current["n1"]] == [WHEN_UNKNOWN]
    assert tracker.refresh(EMPTY_OBJECTS, 200.0)
    assert [(e.xid, e.when) for e in tracker.current["n1"]] == [(79, WHEN_UNKNOWN), (48, 200.0)]
    assert not tracker.refresh(EMPTY_OBJECTS, 300.0)
