"""Warm builders parked across a recording: which one a jump moves, and that it changes
nothing a replay shows (real recordings written by the real :class:`TapeWriter`)."""

from __future__ import annotations

import threading
import time
from dataclasses import is_dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from gputui.domain.inputs import ClusterObjects
from gputui.domain.replay_cursor import ReplayCursor
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.changes import changed_nodes
from gputui.sources.tape.cost import WIDE
from gputui.sources.tape.pool import parking_times
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.source import TapeSource
from gputui.sources.tape.writer import TapeWriter
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.fixtures.tapes import T0, small_cluster, write_xid_tape

DRIVER_DS = "nvidia-driver-daemonset"


def _with_pod_phase(objects: ClusterObjects, index: int) -> ClusterObjects:
    """``objects`` with the ``index``-th pod (by key) given a new restart count."""
    pods = dict(objects.pods)
    key = [k for k in sorted(pods) if pods[k].get("status", {}).get("containerStatuses")][index]
    status = pods[key]["status"]
    first, *rest = status["containerStatuses"]
    counted = {**first, "restartCount": first.get("restartCount", 0) + 1}
    pods[key] = {**pods[key], "status": {**status, "containerStatuses": [counted, *rest]}}
    return replace(objects, pods=pods)


def _bumped(objects: ClusterObjects) -> ClusterObjects:
    """The driver DaemonSet at its next generation (a driver upgrade was started)."""
    daemonsets = dict(objects.daemonsets)
    ds = daemonsets[DRIVER_DS]
    metadata = ds["metadata"]
    daemonsets[DRIVER_DS] = {**ds, "metadata": {**metadata,
                                                "generation": metadata["generation"] + 1}}
    return replace(objects, daemonsets=daemonsets)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> tuple[TapeReader, list[float]]:
    """Ten seconds apart: the recorded xid-storm cluster, then one pod changed per build
    (times 1-5), a new driver DaemonSet generation (time 6), pods again (7-9)."""
    recording = load_recording("xid-storm", SCENARIOS)
    base = recording.objects
    assert DRIVER_DS in base.daemonsets
    path = tmp_path_factory.mktemp("pool") / "story.tape"
    writer = TapeWriter(path, context="pool", server="https://pool")
    start = recording.now - 100.0
    objects, times = base, []
    try:
        for step in range(10):
            if step == 6:
                objects = _bumped(objects)
            elif step:
                objects = _with_pod_phase(objects, step)
            times.append(start + 10.0 * step)
            writer.objects(objects, times[-1])
            assert writer.drain(30.0)
    finally:
        writer.close()
    return TapeReader.open(path), times


def test_the_cost_counts_changed_objects_and_a_new_generation_as_everything(
        story: tuple[TapeReader, list[float]]) -> None:
    reader, times = story
    assert reader.rebuild_cost(times[0], times[0]) == 0
    assert reader.rebuild_cost(times[1], times[4]) == 3  # one pod per build
    assert reader.rebuild_cost(times[4], times[1]) == 3  # either way
    assert reader.rebuild_cost(times[0], times[5]) == 5
    assert reader.rebuild_cost(times[5], times[6]) >= WIDE  # the DaemonSet's generation
    assert reader.rebuild_cost(times[7], times[9]) == 2
    assert reader.rebuild_cost(times[2] + 3.0, times[3]) == 1  # between builds: the last
    # the shares of the 9 changes after the first build, the DaemonSet's included
    assert reader.change_quantile(0.0) == times[0]
    assert reader.change_quantile(0.5) == times[4]
    assert reader.change_quantile(1.0) == times[9]
    assert parking_times(reader, 3) == [times[3], times[5], times[8]]  # 2/7, 4/7, 6/7


def test_what_a_keyframe_repeats_costs_nothing(tmp_path: Path) -> None:
    """Two thirds of the nodes relabelled per build: keyframes come, and each repeats the
    third that did not change; only the relabelled ones count, across a keyframe too."""
    base = small_cluster(30)
    builds = [(base, T0)]
    for step in range(1, 6):
        relabelled = small_cluster(20, label=str(step) * 2000)  # heavy: keyframes come
        builds.append((replace(base, nodes={**base.nodes, **relabelled.nodes}), T0 + step))
    path = tmp_path / "keyframes.tape"
    writer = TapeWriter(path, context="ctx", server="https://k", keyframe_every=1.0)
    for objects, now in builds:
        writer.objects(objects, now)
        assert writer.drain(10.0)
    writer.close()
    assert writer.keyframes >= 2
    reader = TapeReader.open(path)
    assert [reader.rebuild_cost(T0 + step - 1, T0 + step) for step in range(1, 6)] == [20] * 5


def _cursor(reader: TapeReader) -> ReplayCursor:
    return ReplayCursor(reader.change_times(), reader.start, reader.end,
                        monotonic=time.monotonic)


def test_a_jump_moves_the_builder_with_least_to_redo(
        story: tuple[TapeReader, list[float]]) -> None:
    reader, times = story
    source = TapeSource(reader, _cursor(reader))
    source.build_at(times[0])
    source.pool.park_in_background(parking_times(reader, 3), threading.Event()).join(60.0)
    parked = sorted(warm.at for warm in source.pool.builders)
    assert parked == [times[0], times[3], times[5], times[8]]
    assert source.pool.nearest(times[9]).at == times[8]
    assert source.pool.nearest(times[6]).at == times[8]  # same side of the new generation
    assert source.pool.nearest(times[2]).at == times[3]
    warm = source.pool.nearest(times[1])
    assert warm.at == times[0]
    source.build_at(times[1])
    assert warm.at == times[1]  # that one moved; the others stay parked
    assert sorted(w.at for w in source.pool.builders) == [times[1], times[3], times[5],
                                                          times[8]]


def test_every_jump_with_parked_builders_builds_what_a_full_build_gives(
        story: tuple[TapeReader, list[float]], tmp_path: Path) -> None:
    for reader in (story[0], TapeReader.open(write_xid_tape(tmp_path / "xid.tape"))):
        source = TapeSource(reader, _cursor(reader))
        times = list(reader.change_times())
        source.build_at(times[0])
        source.park_builders().join(60.0)
        assert len(source.pool.builders) > 1
        order = times + times[::-1] + times[::3] + times[1::2]
        for at in order:
            got = source.build_at(at)
            want = SnapshotBuilder().build(reader.objects_at(at), at)
            assert got.nodes == want.nodes, at
            assert got.findings == want.findings, at
            assert got.upgrade == want.upgrade, at


def test_a_slow_first_build_parks_builders_and_a_fast_one_does_not(
        story: tuple[TapeReader, list[float]]) -> None:
    reader, _ = story
    for slower, parks in ((60.0, False), (0.0, True)):
        source = TapeSource(reader, _cursor(reader))
        source.park_when_slower = slower
        delivered = threading.Event()
        source.start(lambda _snapshot, seen=delivered: seen.set(), lambda _status: None)
        try:
            assert delivered.wait(30.0)
            deadline = time.monotonic() + 30.0
            parked = len(parking_times(reader)) + 1
            while parks and len(source.pool.builders) < parked and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (len(source.pool.builders) == parked) is parks
            assert (source.parking is not None) is parks
        finally:
            source.stop()


def test_changed_nodes_from_a_parked_builder_are_few(
        story: tuple[TapeReader, list[float]]) -> None:
    """The point of parking: from the nearest builder a far jump redoes a slice."""
    reader, times = story
    source = TapeSource(reader, _cursor(reader))
    source.build_at(times[0])
    far: dict[str, Any] = {"objects": reader.objects_at(times[9])}
    assert len(changed_nodes(reader.objects_at(times[0]), far["objects"])) >= 1
    source.park_builders().join(60.0)
    warm = source.pool.nearest(times[9])
    assert warm.objects is not None
    assert len(changed_nodes(warm.objects, far["objects"])) <= 1


def test_a_fork_goes_its_own_way(story: tuple[TapeReader, list[float]]) -> None:
    """A fork and its original each build what a fresh builder builds at their own times,
    however the other moves afterwards (nothing either changes is shared)."""
    reader, times = story
    original = SnapshotBuilder()
    objects = reader.objects_at(times[2])
    original.build(objects, times[2])
    fork = original.fork()
    moves = [(original, times[9]), (fork, times[4]), (original, times[0]),
             (fork, times[7]), (fork, times[1]), (original, times[5])]
    last = {id(original): objects, id(fork): objects}
    for builder, at in moves:
        now = reader.objects_at(at)
        got = builder.build(now, at, changed_nodes=changed_nodes(last[id(builder)], now))
        last[id(builder)] = now
        want = SnapshotBuilder().build(now, at)
        assert got.nodes == want.nodes and got.findings == want.findings, at
        assert got.upgrade == want.upgrade and got.joins == want.joins, at


def _mutable(value: object) -> bool:
    if isinstance(value, dict | list | set):
        return True
    return (type(value).__module__.startswith("gputui.domain")
            and hasattr(value, "__dict__") and not is_dataclass(value))


def _shared(left: object, right: object, path: str, depth: int) -> list[str]:
    """Paths of mutable containers (or trackers) the two hold in common."""
    if left is right:
        return [path] if _mutable(left) else []
    if depth == 0:
        return []
    if isinstance(left, dict) and isinstance(right, dict):
        return [p for key in left.keys() & right.keys()
                for p in _shared(left[key], right[key], f"{path}[{key!r}]", depth - 1)]
    if isinstance(left, list) and isinstance(right, list):
        return [p for i, (a, b) in enumerate(zip(left, right, strict=False))
                for p in _shared(a, b, f"{path}[{i}]", depth - 1)]
    if _mutable(left) and hasattr(left, "__dict__") and type(left) is type(right):
        return [p for name in vars(left)
                for p in _shared(vars(left)[name], vars(right)[name], f"{path}.{name}",
                                 depth - 1)]
    return []


def test_a_fork_shares_no_container_with_its_original(
        story: tuple[TapeReader, list[float]]) -> None:
    """The guard for the next attribute someone adds to a builder or a tracker: whatever
    mutable container it is, the fork must hold its own (only the inputs, which the domain
    never changes, and the parsed-MIG-config memo are shared)."""
    reader, times = story
    builder = SnapshotBuilder()
    builder.build(reader.objects_at(times[5]), times[5])
    fork = builder.fork()
    allowed = {"builder._thresholds", "builder._mig._cache"}
    found = [path for path in _shared(builder, fork, "builder", 4)
             if path not in allowed and not path.startswith(("builder._configmaps[",
                                                              "builder._pods._pods["))]
    assert found == []


class _CountingTape:
    """The reader, counting the moments read (parking reads one per builder it parks)."""

    def __init__(self, reader: TapeReader) -> None:
        self.reader = reader
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)

    def objects_at(self, at: float) -> ClusterObjects:
        self.reads += 1
        return self.reader.objects_at(at)


def test_parking_waits_while_the_operator_jumps(
        story: tuple[TapeReader, list[float]]) -> None:
    """No builder is parked while a build runs (the source holds the lock) nor within
    ``quiet`` seconds of the last one; once the jumps pause, all are parked."""
    reader, times = story
    tape = _CountingTape(reader)
    source = TapeSource(tape, _cursor(reader))
    source.build_at(times[0])
    reads = tape.reads
    source.pool.quiet = 0.2
    with source._lock:  # a jump being built
        thread = source.park_builders()
        time.sleep(0.5)
        assert tape.reads == reads and len(source.pool.builders) == 1
    source.pool.last_used = time.monotonic() + 3600.0  # as if jumps went on for an hour
    time.sleep(0.3)
    assert tape.reads == reads
    source.pool.last_used = time.monotonic()  # the jumps stop
    thread.join(60.0)
    assert len(source.pool.builders) == len(parking_times(reader)) + 1
