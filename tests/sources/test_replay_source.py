"""``gputui replay``'s source: the snapshot of a real recording at the cursor's time.

Recordings are written by the real :class:`TapeWriter` (tests/fixtures/tapes.py): one of the
emulated ``xid-storm`` scenario read live through a :class:`KubeSource`, one of fixed frames
built from the recorded scenario for exact times.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from gputui.domain.metrics import MetricsWant
from gputui.domain.model import ClusterSnapshot
from gputui.domain.replay_cursor import PlayState, ReplayCursor
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.changes import changed_nodes
from gputui.sources.errors import SourceError
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.source import METRICS_NOT_RECORDED, NOT_RECORDED, TapeMetrics, TapeSource
from tests.fixtures.tapes import XID_NODE, XIDS, write_xid_tape
from tests.helpers import poll


@pytest.fixture
def tape(tmp_path: Path) -> TapeReader:
    return TapeReader.open(write_xid_tape(tmp_path / "xid.tape"))


def _cursor(reader: TapeReader) -> ReplayCursor:
    return ReplayCursor(reader.change_times(), reader.start, reader.end,
                        monotonic=time.monotonic)


def _xid79(snapshot: ClusterSnapshot) -> list[str]:
    return [f.node or "" for f in snapshot.findings
            if f.code == "xid-error" and "XID 79" in f.message]


def test_live_recording_has_the_xid_after_its_time_and_not_before(
        live_tape: tuple[Path, dict[str, object]]) -> None:
    path, seen = live_tape
    reader = TapeReader.open(path)
    source = TapeSource(reader, _cursor(reader))
    first = source.build_at(reader.start)
    assert first.context == seen["context"] and not _xid79(first)
    xid_time = float(seen["xid79_at"])  # type: ignore[arg-type]
    # the first recorded build that has it is the one the live screen showed it in
    with_xid = [t for t in reader.change_times() if _xid79(source.build_at(t))]
    assert with_xid and min(with_xid) == pytest.approx(xid_time, abs=1e-6)
    before = max(t for t in reader.change_times() if t < xid_time)
    assert not _xid79(source.build_at(before))
    assert _xid79(source.build_at(reader.end))


def test_each_step_and_far_jump_builds_what_a_full_build_gives(tape: TapeReader) -> None:
    source = TapeSource(tape, _cursor(tape))
    times = list(tape.change_times()) + [tape.start + 25.0, tape.end]
    order = times + random.Random(7).sample(times, len(times)) + times[::-1]
    for at in order:
        got = source.build_at(at)
        want = SnapshotBuilder().build(tape.objects_at(at), at)
        assert got.nodes == want.nodes, at
        assert got.findings == want.findings, at
        assert got.generated_at == at


def test_changed_nodes_are_the_nodes_whose_objects_differ(tape: TapeReader) -> None:
    start = tape.start
    assert changed_nodes(tape.objects_at(start), tape.objects_at(start + 5)) == frozenset()
    assert changed_nodes(tape.objects_at(start), tape.objects_at(start + 20)) == {XID_NODE}
    assert changed_nodes(tape.objects_at(start + 20), tape.objects_at(start + 60)) == {
        "gke-prod-h100-pool-7f3a-4vvm"}
    # the cordon at +150 changes the Node object itself
    assert changed_nodes(tape.objects_at(start + 100), tape.objects_at(start + 150)) == {
        XID_NODE}


def test_findings_before_and_after_each_xid(tape: TapeReader) -> None:
    source = TapeSource(tape, _cursor(tape))
    for offset, node, _, code, _ in XIDS:
        before = source.build_at(tape.start + offset - 0.5)
        after = source.build_at(tape.start + offset)
        said = [f for f in after.findings if f.node == node and f"XID {code}" in f.message]
        assert said, (offset, code)
        assert not [f for f in before.findings if f.node == node
                    and f"XID {code}" in f.message]
    assert source.build_at(tape.start + 150).nodes[XID_NODE].cordoned
    assert not source.build_at(tape.start + 149).nodes[XID_NODE].cordoned


def test_the_source_thread_follows_the_cursor(tape: TapeReader) -> None:
    cursor = _cursor(tape)
    source = TapeSource(tape, cursor)
    snapshots: list[ClusterSnapshot] = []
    statuses: list[SourceStatus] = []
    timelines: list[int] = []
    lock = threading.Lock()

    def on_snapshot(snapshot: ClusterSnapshot) -> None:
        with lock:
            snapshots.append(snapshot)

    source.on_timeline = lambda events: timelines.append(len(events))
    source.start(on_snapshot, statuses.append)
    try:
        assert poll(lambda: len(snapshots) == 1 and bool(statuses))
        assert snapshots[0].generated_at == tape.start
        cursor.step(+1)
        assert poll(lambda: snapshots[-1].generated_at == tape.start + 20)
        assert _xid79(snapshots[-1]) == [XID_NODE]
        cursor.to_end()
        assert poll(lambda: statuses[-1].last_update == tape.end)
        # a jump says "seeking" at once, with the time the panes still show; the header's
        # time is always the last build's, never a cursor ahead of the screen
        seeking = [s for s in statuses if s.play is PlayState.SEEKING]
        assert seeking and seeking[-1].last_update == tape.start + 20
        assert all(s.last_update in {b.generated_at for b in snapshots} for s in statuses)
        status = statuses[-1]
        assert status.connection is Connection.REPLAY and status.play is PlayState.END
        assert snapshots[-1].generated_at == tape.end
        assert status.recorded_at == tape.recorded_at and status.context == tape.context
        cursor.to_start()
        cursor.toggle()  # play: builds keep coming while the time moves
        assert poll(lambda: snapshots[-1].generated_at > tape.start
                    and statuses[-1].play is PlayState.PLAYING
                    and statuses[-1].play_speed == 1.0)
    finally:
        source.stop()
    count = len(snapshots)
    time.sleep(0.3)
    assert len(snapshots) == count  # stopped means stopped
    # handed when it changes: none at the start, the XID, all 7 at the end, none again
    assert timelines == [0, 1, 7, 0]


def test_pod_logs_and_events_are_not_in_the_recording(tape: TapeReader) -> None:
    source = TapeSource(tape, _cursor(tape))
    for read in (lambda: source.pod_log("gpu-operator", "nvidia-driver-x"),
                 lambda: source.pod_events("gpu-operator", "nvidia-driver-x")):
        with pytest.raises(SourceError) as raised:
            read()
        assert str(raised.value) == NOT_RECORDED and "\n" not in NOT_RECORDED
    assert not hasattr(source, "target")  # no kubeconfig, so no context switch, no writer


def test_metrics_come_from_the_recording_or_say_not_recorded(tape: TapeReader) -> None:
    cursor = _cursor(tape)
    feed = TapeMetrics(tape, cursor)
    feed.want(MetricsWant(selected=XID_NODE, visible=(XID_NODE,)))
    assert feed.read_once().origin.error == METRICS_NOT_RECORDED  # before the first reading
    cursor.jump(tape.start + 95)
    reading = feed.read_once()
    assert reading.origin.kind == "replay" and not reading.origin.error
    assert reading.node is not None and reading.node.node == XID_NODE
    assert reading.origin.updated_at == tape.start + 90  # the newest reading before
    assert [g.xid for g in reading.node.gpus][3] == 79
    feed.want(MetricsWant(selected="gke-prod-h100-pool-7f3a-hdmv"))
    other = feed.read_once()
    assert other.node is None and other.origin.error == METRICS_NOT_RECORDED


def test_a_heartbeat_alone_rebuilds_no_node(tape: TapeReader) -> None:
    """The kubelet's status report (``lastHeartbeatTime`` and the ``resourceVersion`` its
    write bumps, every 5 min) changes nothing the domain shows, so a jump over it rebuilds
    nothing; a real condition change still counts."""
    objects = tape.objects_at(tape.start)
    node = objects.nodes[XID_NODE]
    conditions = node["status"]["conditions"]
    beat = {**node, "metadata": {**node["metadata"], "resourceVersion": "987654"},
            "status": {**node["status"], "conditions": [
                {**c, "lastHeartbeatTime": "2026-12-01T18:30:00Z"} for c in conditions]}}
    later = replace(objects, nodes={**objects.nodes, XID_NODE: beat})
    assert changed_nodes(objects, later) == frozenset()
    full = SnapshotBuilder()
    assert full.build(later, tape.start).nodes == SnapshotBuilder().build(
        objects, tape.start).nodes  # what makes skipping it safe
    down = {**beat, "status": {**beat["status"], "conditions": [
        {**c, "status": "False"} if c.get("type") == "Ready" else c for c in conditions]}}
    assert changed_nodes(objects, replace(objects, nodes={**objects.nodes,
                                                          XID_NODE: down})) == {XID_NODE}
