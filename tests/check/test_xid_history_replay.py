"""A recording keeps every XID of the lookback, and a replay grades from that history.

The session saw GPU 3 of gpu-1 report XID 95, then 45 fifteen seconds later (the gauge kept
only 45). The recording holds both with when each was first and last seen and the pod on
the GPU, so ``check --json --replay`` at the end is critical and names 95, as live was.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from gputui.domain.inputs import XidEvent
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.tape.reader import TapeReader
from tests.fixtures.tapes import T0, small_cluster, write_tape

Run = Callable[..., subprocess.CompletedProcess[str]]
PODS = ("ml/trainer-0",)
FATAL = XidEvent(3, 95, T0 - 360, "Uncontained ECC error", pods=PODS)
CLEANUP = XidEvent(3, 45, T0 - 345, "Preemptive cleanup", pods=PODS)


def _recording(path: Path) -> Path:
    base = replace(small_cluster(), loading=frozenset())  # the session had read everything
    write_tape(path, [(replace(base, xids={"gpu-1": (FATAL,)}), T0 - 355),
                 (replace(base, xids={"gpu-1": (replace(FATAL, last_seen=T0 - 355),
                                                CLEANUP)}), T0 - 340),
                 (replace(base, xids={"gpu-1": (replace(FATAL, last_seen=T0 - 355),
                                                CLEANUP)}), T0)])
    return path


def test_recording_keeps_the_xid_history(tmp_path: Path) -> None:
    reader = TapeReader.open(_recording(tmp_path / "r.gputui-rec"))
    events = reader.objects_at(T0).xids["gpu-1"]
    assert [(e.xid, e.when, e.last_seen, e.pods) for e in events] == [
        (95, T0 - 360, T0 - 355, PODS), (45, T0 - 345, 0.0, PODS)]
    snap = SnapshotBuilder().build(reader.objects_at(T0), T0)
    [x] = [f for f in snap.findings if f.code == "xid-error"]
    assert x.severity.value == "critical" and "XID 95" in x.message and "then 45" in x.message


def test_check_json_of_a_replay_grades_the_worst_xid(gputui: Run, tmp_path: Path) -> None:
    path = _recording(tmp_path / "r.gputui-rec")
    done = gputui("check", "--json", "--replay", str(path), "--at=-0s")
    assert done.returncode == 1, done.stderr
    [x] = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "xid-error"]
    assert x["severity"] == "critical" and x["node"] == "gpu-1"
    assert x["message"].startswith("GPU 3: XID 95 (uncontained ECC error")
    assert "then 45" in x["message"] and "pods: ml/trainer-0" in x["message"]
