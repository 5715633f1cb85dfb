"""XID reading: the exposition format and Prometheus' answer."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain.inputs import EMPTY_OBJECTS, WHEN_UNKNOWN, XidEvent
from gputui.settings import Settings
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
    assert [(s["gpu"], float(s["value"])) for s in series] == [("0", 0.0), ("3", 79.0)]
    assert series[1]["err_msg"] == "GPU has fallen off the bus"


def test_bad_exposition_text_is_one_line() -> None:
    with pytest.raises(SourceError, match="unreadable metrics text"):
        parse_exposition('DCGM_FI_DEV_XID_ERRORS{gpu="0" 1\n')


def test_prometheus_unreachable_is_one_line() -> None:
    with pytest.raises(SourceError, match="unreachable"):
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

    def fake_read(http: Any, objects: Any, now: float, url: Any = None,
                  lookback: float = 0.0, counted_at: float = 0.0) -> Any:
        asked.append(now)
        if url:
            raise SourceError("Prometheus down")
        return _reading(79)

    monkeypatch.setattr(connect, "read_xids", fake_read)
    connect._xids(None, EMPTY_OBJECTS, Settings())  # type: ignore[arg-type]
    reading = connect._xids(None, EMPTY_OBJECTS,  # type: ignore[arg-type]
                            Settings(prometheus_url="http://prometheus:9090"))
    assert asked[0] == WHEN_UNKNOWN and asked[2] == WHEN_UNKNOWN
    assert "Prometheus down; read from exporters" in reading.note


def test_live_tracker_stamps_first_read_unknown_then_first_seen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XIDs present at the first read predate gputui: unknown time; later ones: first seen."""
    from gputui.sources import xids

    readings = iter([_reading(79), _reading(79, 48), _reading(79, 48)])
    monkeypatch.setattr(xids, "read_with_fallback", lambda *args: next(readings))
    tracker = xids.XidTracker(None)  # type: ignore[arg-type]
    assert tracker.refresh(EMPTY_OBJECTS, 100.0)
    assert [e.when for e in tracker.current["n1"]] == [WHEN_UNKNOWN]
    assert tracker.refresh(EMPTY_OBJECTS, 200.0)
    assert [(e.xid, e.when) for e in tracker.current["n1"]] == [(79, WHEN_UNKNOWN), (48, 200.0)]
    assert not tracker.refresh(EMPTY_OBJECTS, 300.0)


def test_a_cluster_gputui_started_bounds_the_first_reads_xids(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo cluster is gputui's own: an XID at the first read is no older than it."""
    from gputui.sources import xids

    monkeypatch.setattr(xids, "read_with_fallback", lambda *args: _reading(79))
    tracker = xids.XidTracker(None, born=50.0)  # type: ignore[arg-type]
    tracker.refresh(EMPTY_OBJECTS, 100.0)
    assert [e.when for e in tracker.current["n1"]] == [50.0]
