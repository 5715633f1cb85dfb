"""Demo mode: the live source over the emulated GPU Operator, through its kubeconfig."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.demo import open_demo_source, read_demo_snapshot, settle_span, settle_speed
from gputui.settings import Settings
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.connect import open_source, read_snapshot
from gputui.sources.errors import SourceError
from tests.sources.helpers import wait_for


def test_demo_source_streams_the_emulated_cluster() -> None:
    source = open_demo_source(Settings(demo=True, scenario="healthy", speed=5.0), coalesce=0.05)
    snapshots: list[Any] = []
    statuses: list[SourceStatus] = []
    source.start(snapshots.append, statuses.append)
    try:
        snapshot = wait_for(lambda: snapshots and len(snapshots[-1].nodes) == 7
                            and not snapshots[-1].loading and snapshots[-1], timeout=60,
                            what="7 demo nodes")
        assert snapshot.context == "gputui-demo"
        assert snapshot.operator_namespace == "gpu-operator"
        assert snapshot.cluster_policy.state == "ready"
        assert abs(snapshot.generated_at - source.clock()) < 60  # the emulated clock
        assert source.status().connection is Connection.LIVE
    finally:
        source.stop()
    assert source.status().server.startswith("http://127.0.0.1:")


def test_unknown_demo_scenario_is_one_line() -> None:
    with pytest.raises(SourceError, match="unknown scenario"):
        open_demo_source(Settings(demo=True, scenario="no-such-scenario"))


def test_the_sources_never_start_a_demo() -> None:
    """Demo settings given to the sources' own entry points fail closed (one line): they
    do not know the emulator, and must not read whatever kubeconfig happens to be there."""
    for entry in (open_source, read_snapshot):
        with pytest.raises(SourceError, match="demo mode: the emulated cluster is opened by "
                                              "gputui.demo"):
            entry(Settings(demo=True, scenario="healthy"))
    with pytest.raises(SourceError, match="unknown scenario"):
        read_demo_snapshot(Settings(demo=True, scenario="no-such-scenario"))


def test_settle_plan() -> None:
    assert settle_span("healthy") < settle_span("upgrade-failed")
    assert settle_speed(10.0, minimum=2.0) == 2.5
    assert settle_speed(1e9) == 600.0


def test_live_xids_from_the_exporters() -> None:
    """xid-storm: the exporters' XID 79 becomes a critical finding in live snapshots."""
    # 10x: XID 79 comes 2 s in and stays critical for the 1 h lookback (6 min here), so the
    # ceiling below can be generous for a loaded machine
    source = open_demo_source(Settings(demo=True, scenario="xid-storm", speed=10.0),
                         coalesce=0.05, xid_every=0.3)
    snapshots: list[Any] = []
    source.start(snapshots.append, lambda _: None)
    try:
        def xid_79() -> bool:
            return bool(snapshots) and any(
                f.code == "xid-error" and "XID 79" in f.message and f.severity.value == "critical"
                for f in snapshots[-1].findings)

        wait_for(xid_79, timeout=180, what="XID 79 finding")
        first_seen = {e.xid: e.when for events in source.xids.current.values() for e in events}
        assert 79 in first_seen and first_seen[79] <= source.clock()
    finally:
        source.stop()


def test_demo_reads_xids_at_the_metrics_refresh_rate() -> None:
    """The emulated exporters move with the fast clock: XIDs follow ``refresh``, not 30 s."""
    source = open_demo_source(Settings(demo=True, scenario="empty", refresh=1.5))
    try:
        assert source.xid_every == 1.5
    finally:
        source.stop()
