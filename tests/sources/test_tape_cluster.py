"""A recording names its cluster (issue 29, item 3): the server URL without userinfo and
the ``kube-system`` namespace UID, in a cluster frame (``"k": "C"``) written before the
objects that carry it; a replay's snapshots carry it, and ``check --replay --format
markdown`` names it as the live summary does. Older recordings (no cluster frame) read as
before, with the UID unknown. Fails on the code before the change: nothing recorded the
UID (and ``ClusterObjects`` had no place for it)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

from gputui.domain.model import ClusterSnapshot
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.summary import SummaryInput, build_summary
from gputui.handoff import replay_summary
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.writer import TapeWriter
from tests.fixtures.tapes import T0, small_cluster


def _frames(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def test_the_cluster_frame_names_the_cluster_and_the_replay_carries_it(
        tmp_path: Path) -> None:
    path = tmp_path / "c.gputui-rec"
    base = replace(small_cluster(), server="https://admin:pw@K.example:6443/", cluster_uid="u-1")
    writer = TapeWriter(path, context="ctx", server="https://K.example:6443")
    for objects, now in ((base, T0), (replace(base, loading=frozenset()), T0 + 5),
                         (replace(base, cluster_uid="u-2"), T0 + 10)):
        writer.objects(objects, now)
        assert writer.drain(10.0)
    writer.close()
    frames = _frames(path)
    clusters = [frame for frame in frames if frame.get("k") == "C"]
    assert clusters == [
        {"t": T0, "k": "C", "cluster": {"server": "https://k.example:6443", "uid": "u-1"}},
        {"t": T0 + 10, "k": "C", "cluster": {"server": "https://k.example:6443",
                                             "uid": "u-2"}}]
    assert frames.index(clusters[0]) == 1  # right after the header, before the keyframe
    reader = TapeReader.open(path)
    assert reader.objects_at(T0 + 5).cluster_uid == "u-1"
    assert reader.objects_at(T0 + 10).cluster_uid == "u-2"
    snapshot = snapshot_at(reader, T0 + 5)
    text = replay_summary(snapshot, str(path), (), T0, T0 + 5)
    assert "- Cluster: https://k.example:6443 (kube-system UID u-1)" in text
    assert "pw" not in text.split("## ClusterPolicy")[0]


def snapshot_at(reader: TapeReader, at: float) -> ClusterSnapshot:
    return SnapshotBuilder().build(reader.objects_at(at), at)


def test_a_recording_without_a_cluster_frame_reads_with_the_uid_unknown(
        tmp_path: Path) -> None:
    path = tmp_path / "old.gputui-rec"
    writer = TapeWriter(path, context="ctx", server="https://k")
    writer.objects(small_cluster(), T0)  # no UID read: no cluster frame, as an older gputui
    assert writer.drain(10.0)
    writer.close()
    assert not [frame for frame in _frames(path) if frame.get("k") == "C"]
    reader = TapeReader.open(path)
    snapshot = snapshot_at(reader, T0)
    assert snapshot.cluster_uid == ""
    text = build_summary(SummaryInput(snapshot, T0))
    assert "- Cluster: https://k\n" in text
