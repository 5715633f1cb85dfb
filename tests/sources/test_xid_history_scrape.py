"""Scraping exporters directly: every XID seen is remembered for the lookback, with its pods.

dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` keeps only the last XID, so a 95 that one scrape
shows is gone from the next one, which shows 45. gputui must grade the 95 (critical), name
the 45 after it, and the pods dcgm-exporter maps to that GPU. The exposition texts are what
dcgm-exporter serves with pod mapping on (``DCGM_EXPORTER_KUBERNETES=true``).
"""

from __future__ import annotations

from typing import Any

from gputui.domain.findings_metrics import xid_node_findings
from gputui.domain.inputs import WHEN_UNKNOWN, XidEvent
from gputui.domain.model import Finding, Severity
from gputui.sources.xids import XidTracker, scrape_exporters
from tests.domain import factory as f

OBJECTS = f.objects([f.node()], f.healthy_pods())
GPU0 = 'gpu="0",UUID="GPU-0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"'
POD = 'container="main",namespace="ml",pod="trainer-0"'
OLD_POD = 'container_name="main",pod_namespace="ml",pod_name="trainer-7"'


def exposition(code: int, msg: str, pod: str = POD, extra: str = "") -> str:
    """One GPU's answer: its XID gauge, utilisation and temperature, all with pod labels."""
    return (
        "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
        f'DCGM_FI_DEV_XID_ERRORS{{{GPU0},{pod},err_code="{code}",err_msg="{msg}"}} {code}\n'
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        f"DCGM_FI_DEV_GPU_UTIL{{{GPU0},{pod}}} 97\n"
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        f"DCGM_FI_DEV_GPU_TEMP{{{GPU0},{pod}}} 71\n" + extra)


NONE = exposition(0, "No Error")
FATAL = exposition(95, "Uncontained ECC error")
CLEANUP = exposition(45, "Preemptive cleanup, due to previous errors")


class Exporters:
    """The API server's pod proxy to one exporter: answers ``texts`` one scrape at a time."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def get_text(self, path: str, **kw: Any) -> str:
        assert path.endswith(":9400/proxy/metrics")
        return self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]

    def close(self) -> None:
        """Nothing to abort."""


def _finding(events: tuple[XidEvent, ...], now: float, lookback: float = 3600.0) -> Finding:
    [finding] = xid_node_findings(f.NODE, events, now, lookback)
    return finding


def test_scrapes_showing_95_then_45_grade_the_95() -> None:
    tracker = XidTracker(Exporters(NONE, FATAL, CLEANUP, CLEANUP))  # type: ignore[arg-type]
    for now in (1000.0, 1030.0, 1045.0, 1075.0):
        tracker.refresh(OBJECTS, now)
    events = tracker.current[f.NODE]
    assert [(e.xid, e.when, e.last_seen) for e in events] == [(95, 1030.0, 1030.0),
                                                               (45, 1045.0, 0.0)]
    x = _finding(events, 1400.0)
    assert x.severity is Severity.CRITICAL and x.subject == "gpu0"
    assert x.message.startswith("GPU 0: XID 95 (uncontained ECC error")
    assert "6 min ago, then 45; pods: ml/trainer-0" in x.message
    assert "reset the GPU" in x.hint


def test_a_remembered_xid_is_forgotten_after_the_lookback() -> None:
    tracker = XidTracker(Exporters(NONE, FATAL, CLEANUP), lookback=600.0)  # type: ignore[arg-type]
    for now in (1000.0, 1030.0, 1045.0):
        tracker.refresh(OBJECTS, now)
    assert tracker.refresh(OBJECTS, 1700.0)  # the 95 was last seen 670 s ago
    assert [e.xid for e in tracker.current[f.NODE]] == [45]
    assert _finding(tracker.current[f.NODE], 1700.0, 600.0).severity is Severity.INFO


def test_45_alone_is_info_and_names_old_namespace_pods() -> None:
    tracker = XidTracker(Exporters(NONE, exposition(45, "Preemptive cleanup", OLD_POD))
                         )  # type: ignore[arg-type]
    tracker.refresh(OBJECTS, 1000.0)
    tracker.refresh(OBJECTS, 1030.0)
    x = _finding(tracker.current[f.NODE], 1060.0)
    assert x.severity is Severity.INFO and "pods: ml/trainer-7" in x.message


def test_one_read_times_an_xid_by_the_exporters_counter() -> None:
    """``gputui check`` reads once: the gauge's XID has no time, but the opt-in counter says
    a 79 happened within its 5 min window, so it is graded (critical), not "time unknown"."""
    counted = ("# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge\n"
               f'DCGM_EXP_XID_ERRORS_COUNT{{{GPU0},{POD},window_size_in_ms="300000",'
               'xid="79"} 2\n')
    reading = scrape_exporters(Exporters(exposition(45, "Preemptive cleanup", extra=counted)),
                               OBJECTS, WHEN_UNKNOWN, counted_at=5000.0)  # type: ignore[arg-type]
    events = reading.xids[f.NODE]
    assert [(e.xid, e.when, e.count) for e in events] == [(45, WHEN_UNKNOWN, 0),
                                                           (79, 4700.0, 2)]
    x = _finding(events, 5000.0)
    assert x.severity is Severity.CRITICAL and "XID 79" in x.message
    assert "(2 times within 5 min)" in x.message and "pods: ml/trainer-0" in x.message


def test_an_unanswered_scrape_keeps_the_history_and_a_gone_node_drops_it() -> None:
    """A failed scrape is no news (the 95 is not "superseded"); a node gone is forgotten."""
    from gputui.sources.errors import SourceError

    class Flaky(Exporters):
        def get_text(self, path: str, **kw: Any) -> str:
            text = super().get_text(path, **kw)
            if text == "down":
                raise SourceError("503 from the pod proxy")
            return text

    tracker = XidTracker(Flaky(NONE, FATAL, "down", "down"))  # type: ignore[arg-type]
    for now in (1000.0, 1030.0, 1060.0):
        tracker.refresh(OBJECTS, now)
    assert [(e.xid, e.last_seen) for e in tracker.current[f.NODE]] == [(95, 0.0)]
    gone = f.objects([f.node("other-node")], f.healthy_pods("other-node"))
    tracker.refresh(gone, 1090.0)
    assert f.NODE not in tracker.current
