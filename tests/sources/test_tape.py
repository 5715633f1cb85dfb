"""The recording format: what the writer writes, the reader gives back exactly.

Unit level: ClusterObjects built with the domain's test factory, written through the real
:class:`TapeWriter` (its thread, gzip, flushes) and read with :class:`TapeReader`. The
recording of a live emulated session is in ``tests/sources/test_tape_live.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gputui.domain.inputs import ClusterObjects
from gputui.domain.merge_patch import merge_diff, merge_patch
from gputui.domain.metrics import (
    FleetMetrics,
    GpuMetrics,
    MetricsOrigin,
    MetricsReading,
    MetricsWant,
    NodeMetrics,
)
from gputui.sources.tape.format import FORMAT, TapeError
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.writer import TapeWriter
from tests.fixtures.tapes import T0, small_cluster, write_tape


def same(a: ClusterObjects, b: ClusterObjects) -> None:
    """Field by field, so a failure names the field."""
    for name in ClusterObjects.__dataclass_fields__:
        left, right = getattr(a, name), getattr(b, name)
        if isinstance(left, tuple | list):
            left, right = list(left), list(right)
        elif isinstance(left, dict):
            left, right = dict(left), dict(right)
        assert left == right, name


def test_round_trip_of_keyframe_and_deltas(tmp_path: Path) -> None:
    first = small_cluster()
    node = dict(first.nodes["gpu-0"])
    node["status"] = {**node.get("status", {}), "conditions": [{"type": "Ready",
                                                               "status": "False"}]}
    second = replace(first, nodes={**first.nodes, "gpu-0": node},
                     forbidden=frozenset({"nvidiadrivers"}))
    pods = dict(second.pods)
    removed = next(iter(pods))
    del pods[removed]
    third = replace(second, pods=pods, nodes={k: v for k, v in second.nodes.items()
                                              if k != "gpu-2"})
    path = tmp_path / "r.gputui-rec"
    write_tape(path, [(first, T0), (second, T0 + 10), (third, T0 + 20)])
    reader = TapeReader.open(path)
    assert (reader.context, reader.server, reader.start, reader.end) == (
        "ctx", "https://k", T0, T0 + 20)
    same(reader.objects_at(T0 - 100), first)  # before the start: the first build
    same(reader.objects_at(T0 + 9.9), first)
    same(reader.objects_at(T0 + 10), second)
    same(reader.objects_at(T0 + 25), third)
    assert removed not in reader.objects_at(T0 + 20).pods
    assert list(reader.change_times()) == [T0, T0 + 10, T0 + 20]


def test_a_kubelet_heartbeat_alone_is_not_recorded(tmp_path: Path) -> None:
    """A node write that only moves the conditions' ``lastHeartbeatTime`` (and the
    ``resourceVersion``) is not a change the domain reads: no frame; the node's next real
    change is recorded whole, on top of what was written."""
    first = small_cluster(2)
    node = json.loads(json.dumps(first.nodes["gpu-1"]))
    node["metadata"]["resourceVersion"] = "999"
    node["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                     "lastHeartbeatTime": "2026-12-01T14:05:00Z"}]
    beat = replace(first, nodes={**first.nodes, "gpu-1": node})
    again = json.loads(json.dumps(node))
    again["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-12-01T14:10:00Z"
    second_beat = replace(first, nodes={**first.nodes, "gpu-1": again})
    labelled = json.loads(json.dumps(again))
    labelled["metadata"]["labels"]["example.com/rev"] = "2"
    changed = replace(first, nodes={**first.nodes, "gpu-1": labelled})
    path = tmp_path / "r.gputui-rec"
    write_tape(path, [(beat, T0), (second_beat, T0 + 10), (changed, T0 + 20)])
    reader = TapeReader.open(path)
    assert list(reader.change_times()) == [T0, T0 + 20]
    assert reader.objects_at(T0 + 15).nodes["gpu-1"]["metadata"]["resourceVersion"] == "999"
    assert reader.objects_at(T0 + 20).nodes["gpu-1"]["metadata"]["labels"][
        "example.com/rev"] == "2"


def test_a_ready_change_with_its_heartbeat_is_recorded(tmp_path: Path) -> None:
    first = small_cluster(2)
    node = json.loads(json.dumps(first.nodes["gpu-1"]))
    node["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                     "lastHeartbeatTime": "2026-12-01T14:05:00Z"}]
    ready = replace(first, nodes={**first.nodes, "gpu-1": node})
    down = json.loads(json.dumps(node))
    down["status"]["conditions"] = [{"type": "Ready", "status": "Unknown",
                                     "lastHeartbeatTime": "2026-12-01T14:06:00Z"}]
    path = tmp_path / "r.gputui-rec"
    write_tape(path, [(ready, T0), (replace(first, nodes={**first.nodes, "gpu-1": down}), T0 + 10)])
    reader = TapeReader.open(path)
    assert reader.objects_at(T0 + 10).nodes["gpu-1"]["status"]["conditions"][0][
        "status"] == "Unknown"


def test_unchanged_build_writes_no_frame_and_delta_is_a_patch(tmp_path: Path) -> None:
    first = small_cluster(2)
    node = json.loads(json.dumps(first.nodes["gpu-1"]))
    node["metadata"]["labels"]["example.com/rev"] = "2"
    second = replace(first, nodes={**first.nodes, "gpu-1": node})
    path = tmp_path / "r"
    write_tape(path, [(first, T0), (first, T0 + 5), (second, T0 + 10)])
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert lines[0]["gputui_tape"] == FORMAT
    assert [line["k"] for line in lines[1:]] == ["K", "D"]
    assert lines[2]["ops"] == [["nodes", "p", "gpu-1",
                                {"metadata": {"labels": {"example.com/rev": "2"}}}]]
    assert TapeReader.open(path).change_times() == [T0, T0 + 10]


def test_keyframe_parts_and_periodic_keyframes(tmp_path: Path) -> None:
    """A 30-node build spans several lines; once the deltas weigh enough (here: every node
    replaced by another), a later keyframe restarts from nothing."""
    builds = [(small_cluster(30, prefix=f"p{i}"), T0 + 60 * i) for i in range(4)]
    path = tmp_path / "r"
    write_tape(path, builds, keyframe_every=100.0)
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    kinds = [(line["k"], line["end"]) for line in lines[1:]]
    assert ("K", 0) in kinds and kinds.count(("K", 1)) >= 2
    reader = TapeReader.open(path)
    for objects, now in builds:
        same(reader.objects_at(now + 1), objects)


def test_file_is_private_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "r"
    write_tape(path, [(small_cluster(1), T0)])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(TapeError, match="exists already"):
        TapeWriter(path, context="c", server="s")
    os.symlink(path, tmp_path / "link")
    with pytest.raises(TapeError, match="symbolic link"):
        TapeWriter(tmp_path / "link", context="c", server="s")


def test_truncated_file_keeps_every_complete_build(tmp_path: Path) -> None:
    builds = [(small_cluster(20, label=str(i)), T0 + i) for i in range(5)]
    path = tmp_path / "r"
    write_tape(path, builds)
    raw = gzip.decompress(path.read_bytes())
    cut = raw.rindex(b'"t":') + 10  # inside the last build's last line
    # a stream written with sync flushes and cut there: what a kill -9 leaves
    squeeze = zlib.compressobj(6, zlib.DEFLATED, 31)
    partial = squeeze.compress(raw[:cut]) + squeeze.flush(zlib.Z_SYNC_FLUSH)
    (tmp_path / "cut").write_bytes(partial[:-3])
    reader = TapeReader.open(tmp_path / "cut")
    assert reader.end == T0 + 3
    same(reader.objects_at(T0 + 10), builds[3][0])


def _gz(data: bytes) -> bytes:
    """gzip with a fixed header time: the bytes name the test, and every xdist worker must
    collect the same names."""
    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "not a gputui recording"),
    (b"hello, this is text\n", "not a gputui recording"),
    (_gz(b'{"format": 1}\n'), "not a gputui recording"),
    (_gz(b'{"gputui_tape": 9, "recorded_at": 1}\n'), "newer gputui .format 9"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n'), "holds no cluster state"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "D", "end": 1, '
                   b'"ops": []}\n{"t": 2}\n'), "damaged .line 2: a delta before"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "K", "end": 1, '
                   b'"ops": [["nodes", "p", "x", {}]]}\n\n'), "damaged .line 2: a patch"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "K", "end": 1, '
                   b'"ops": [["nodes", "s", ["a"], {}]]}\n\n'), "damaged .line 2: bad key"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": "x", "k": "K"}\n\n'),
     "damaged .line 2: t is not"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "K", "end": 1, '
                   b'"ops": [], "whole": {"cluster_policies": ["x"]}}\n\n'), "damaged"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "K", "end": 1, '
                   b'"ops": [], "whole": {"disruption_budgets": [1]}}\n\n'), "damaged"),
    (_gz(b'{"gputui_tape": 1, "recorded_at": 1}\n{"t": 1, "k": "M", "origin": '
                   b'["none", "", 0, "", 0, ""], "node": {"node": "n", "gpus": [{"gpu": 0, '
                   b'"traces": {"util": [0, 1, [["1", 2]]]}}]}}\n\n'),
     "damaged .line 2: a trace point that is not a number"),
])
def test_foreign_or_damaged_files_are_one_line(tmp_path: Path, content: bytes,
                                               message: str) -> None:
    path = tmp_path / "r"
    path.write_bytes(content)
    with pytest.raises(TapeError, match=message) as caught:
        TapeReader.open(path)
    assert "\n" not in str(caught.value)


def test_corrupt_compressed_data_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "r"
    write_tape(path, [(small_cluster(5), T0)])
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(TapeError, match="damaged|not a gputui"):
        TapeReader.open(path)
    with pytest.raises(TapeError, match="cannot read recording"):
        TapeReader.open(tmp_path / "absent")


def test_hostile_strings_come_back_sanitised(tmp_path: Path) -> None:
    """A recording may come from anyone: terminal escapes in it never reach the screen."""
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    objects = small_cluster(1)
    node = json.loads(json.dumps(objects.nodes["gpu-0"]))
    node["metadata"]["labels"][f"k{evil}"] = f"v{evil}"
    objects = replace(objects, nodes={"gpu-0": node}, context=f"ctx{evil}")
    path = tmp_path / "r"
    writer = TapeWriter(path, context=f"c{evil}", server="s")
    writer.objects(objects, T0)
    writer.timeline([{"at": T0, "text": evil}])
    writer.close()
    reader = TapeReader.open(path)
    text = json.dumps([reader.context, reader.objects_at(T0).nodes, reader.objects_at(T0).context,
                       reader.timeline_until(T0)], ensure_ascii=False)
    assert "\x1b" not in text and "\x07" not in text
    assert reader.timeline_until(T0)[0]["text"]  # kept, cleaned


def test_timeline_events_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "r"
    writer = TapeWriter(path, context="c", server="s")
    writer.objects(small_cluster(1), T0)
    writer.timeline([{"at": T0 + 5, "n": 2}, {"at": T0 + 1, "n": 1}])
    writer.timeline([{"at": T0 + 9, "n": 3}, {"bad": True}])
    writer.close()
    reader = TapeReader.open(path)
    assert [e["n"] for e in reader.timeline_until(T0 + 5)] == [1, 2]
    assert [e["n"] for e in reader.timeline_until(T0 + 100)] == [1, 2, 3]
    assert reader.timeline_until(T0) == []
    assert reader.end == T0 + 9


def _gpu(times: range, base: float) -> GpuMetrics:
    trace = tuple((float(t), base + t % 7) for t in times)
    return GpuMetrics(0, model="NVIDIA H100", util=trace, temp=trace, fb_total=80.0)


def _reading(now: float, node: str | None) -> MetricsReading:
    window = range(int(now) - 118, int(now) + 1, 2)
    return MetricsReading(
        MetricsOrigin("exporter", "API server pod proxy", now),
        FleetMetrics("2 nodes on screen", 16, 9, 55.0, ("gpu-0", 3, 71.0), 1),
        None if node is None else NodeMetrics(node, (_gpu(window, 10.0),)),
        {"gpu-0": 50.0, "gpu-1": float("nan")})


def test_metrics_windows_come_back_whole_but_are_written_once(tmp_path: Path) -> None:
    path = tmp_path / "r"
    writer = TapeWriter(path, context="c", server="s")
    writer.objects(small_cluster(1), T0)
    readings = [_reading(T0 + 2 * i, "gpu-0") for i in range(60)]
    readings.append(_reading(T0 + 120, "gpu-1"))
    for reading in readings:
        writer.metrics(reading)
    writer.close()
    raw = gzip.decompress(path.read_bytes())
    # the point at T0+100 sits in 60 windows of gpu-0 and one of gpu-1: written once per
    # node and trace (util, temp), not once per reading
    assert raw.count(b"[" + str(T0 + 100).encode() + b",") == 4
    reader = TapeReader.open(path)
    got = reader.metrics_at(T0 + 101, MetricsWant(selected="gpu-0"))
    assert got is not None and got.node is not None
    assert got.node.gpus == readings[50].node.gpus  # type: ignore[union-attr]
    assert got.fleet == readings[50].fleet and got.node_util["gpu-0"] == 50.0
    # the newest reading is of gpu-1: gpu-0's part comes from its newest reading
    later = reader.metrics_at(T0 + 200, MetricsWant(selected="gpu-0"))
    assert later is not None and later.node == readings[59].node
    assert reader.metrics_at(T0 - 1, MetricsWant()) is None


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=12),
       st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=12))
def test_merge_patch_is_exact_or_absent(old: Any, new: Any) -> None:
    """Whenever the writer records a patch, applying it gives the new object exactly."""
    patch = merge_diff(old, new)
    if patch is not None:
        assert merge_patch(old, patch) == new
        assert json.loads(json.dumps(merge_patch(old, patch))) == new


def test_record_dir_names_the_file_by_context_and_time(tmp_path: Path) -> None:
    """``record: DIR`` in the config: DIR/<context>-<UTC time>.gputui-rec, DIR made 0700;
    ``--record FILE`` wins."""
    from gputui.cli import build_parser, settings_from_args
    from gputui.sources.tape.recorder import recording_path

    config = tmp_path / "config.yaml"
    config.write_text(f"record: {tmp_path / 'recs'}\n")
    settings = settings_from_args(build_parser().parse_args(["--config", str(config)]))
    path = recording_path(settings, "prod/eu-1 ctx", wall_now=T0)
    assert path == tmp_path / "recs" / "prod_eu-1_ctx-20261129T100000Z.gputui-rec"
    TapeWriter(path, context="c", server="s").close()
    assert stat.S_IMODE(os.stat(tmp_path / "recs").st_mode) == 0o700
    flagged = settings_from_args(build_parser().parse_args(
        ["--config", str(config), "--record", str(tmp_path / "x.rec")]))
    assert recording_path(flagged, "c") == tmp_path / "x.rec"
    assert recording_path(replace(settings, record=None), "c") is None


def test_a_keyframe_keeps_the_identity_of_what_it_repeats(tmp_path: Path) -> None:
    """Objects a later keyframe repeats unchanged come back as the same objects, so a
    replay's incremental snapshot builder sees no change across it."""
    small, y, z = (small_cluster(2, prefix="x"), small_cluster(20, prefix="y"),
                   small_cluster(20, prefix="z"))

    def union(other: ClusterObjects) -> ClusterObjects:
        return replace(small, nodes={**small.nodes, **other.nodes},
                       pods={**small.pods, **other.pods})

    path = tmp_path / "r"
    write_tape(path, [(union(y), T0), (union(z), T0 + 100), (union(z), T0 + 200)],
          keyframe_every=100.0)
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert [(line["k"], line["end"]) for line in lines[1:]].count(("K", 1)) == 2
    reader = TapeReader.open(path)
    before, after = reader.objects_at(T0 + 100), reader.objects_at(T0 + 200)
    same(after, union(z))
    assert all(after.pods[k] is before.pods[k] for k in after.pods)
    assert all(after.nodes[k] is before.nodes[k] for k in after.nodes)


def test_objects_of_shapes_the_cluster_never_sends_are_cut_as_the_cache_cuts_them(
        tmp_path: Path) -> None:
    """A crafted recording cannot hand the domain what the live cache would not: the
    snapshot still builds."""
    from gputui.domain.snapshot import SnapshotBuilder

    objects = small_cluster(2)
    odd = {"metadata": {"name": "gpu-odd", "labels": ["not", "a", "map"]},
           "status": {"conditions": "Ready", "capacity": {"nvidia.com/gpu": {"x": 1}}}}
    objects = replace(objects, nodes={**objects.nodes, "gpu-odd": odd})
    path = tmp_path / "r"
    write_tape(path, [(objects, T0)])
    back = TapeReader.open(path).objects_at(T0)
    assert back.nodes["gpu-0"] == objects.nodes["gpu-0"]
    assert not isinstance(back.nodes["gpu-odd"].get("metadata", {}).get("labels"), list)
    SnapshotBuilder().build(back, T0)


def _budget(allowed: int) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "trainer-pdb", "namespace": "ml", "resourceVersion": "4"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "trainer"}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 1 + allowed,
                       "desiredHealthy": 1, "expectedPods": 1 + allowed}}


def test_disruption_budgets_are_recorded_and_an_older_file_reads_them_as_not_read(
        tmp_path: Path) -> None:
    """The budgets come back as recorded (a replay names the budget the live app named);
    a file written before gputui read budgets has no such field, and reads as "not read"
    (None), never as "no budgets"."""
    first = replace(small_cluster(), disruption_budgets=(_budget(0),))
    moved = replace(first, disruption_budgets=(_budget(1),))
    path = tmp_path / "r.gputui-rec"
    write_tape(path, [(first, T0), (moved, T0 + 10),
                      (replace(moved, disruption_budgets=None), T0 + 20)])
    reader = TapeReader.open(path)
    same(reader.objects_at(T0), first)
    same(reader.objects_at(T0 + 10), moved)
    assert reader.objects_at(T0 + 20).disruption_budgets is None
    frames = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    for frame in frames:
        (frame.get("whole") or {}).pop("disruption_budgets", None)
    older = tmp_path / "older.gputui-rec"
    older.write_bytes(_gz(b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)))
    old = TapeReader.open(older)
    assert old.objects_at(T0 + 10).disruption_budgets is None
    same(replace(old.objects_at(T0 + 10), disruption_budgets=moved.disruption_budgets), moved)
