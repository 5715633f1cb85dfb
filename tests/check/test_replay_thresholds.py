"""A recording is judged by the thresholds its session ran with, not by the replaying
gputui's: "the findings as they were" (real recordings, real reader)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from gputui.check import replay_snapshot
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, thresholds_from_json
from gputui.settings import Settings
from gputui.sources.tape.reader import TapeReader
from tests.fixtures.tapes import XID_NODE, write_xid_tape


def _xid_severities(path: Path, settings: Settings) -> set[str]:
    moment = replay_snapshot(settings, str(path), "+170s", [])
    return {f.severity.value for f in moment.snapshot.findings
            if f.code == "xid-error" and f.node == XID_NODE}


def test_the_recorded_thresholds_judge_the_replay(tmp_path: Path) -> None:
    """XID 79 came at +20 s. The session looked back 60 min for current XIDs: at +170 s it
    is critical. A session that looked back 0.01 min saw it become old (info) by then; a
    replaying gputui that looks back 60 min still says info for that recording."""
    default = write_xid_tape(tmp_path / "default.tape")
    short = write_xid_tape(tmp_path / "short.tape", {"xid_lookback_minutes": 0.01})
    ours = Settings()
    assert "critical" in _xid_severities(default, ours)
    assert _xid_severities(short, ours) == {"info"}
    # and the other way round: a recording made with the default is not judged by ours
    strict = replace(ours, thresholds=replace(ours.thresholds, xid_lookback_minutes=0.01))
    assert _xid_severities(default, strict) == {"info"}  # none recorded: ours apply
    recorded = write_xid_tape(tmp_path / "recorded.tape",
                              {"xid_lookback_minutes": 60.0})
    assert "critical" in _xid_severities(recorded, strict)


def test_a_header_without_usable_thresholds_changes_nothing(tmp_path: Path) -> None:
    path = write_xid_tape(tmp_path / "odd.tape", {
        "xid_lookback_minutes": -5, "driver_startup_minutes": "soon",
        "node_not_ready_minutes": True, "no_such_threshold": 3.0,
        "upgrade_stalled_minutes": 45, "pool_label": "example.com/pool"})
    reader = TapeReader.open(path)
    got = reader.thresholds(DEFAULT_THRESHOLDS)
    assert got == replace(DEFAULT_THRESHOLDS, upgrade_stalled_minutes=45.0,
                          pool_label="example.com/pool")
    none = TapeReader.open(write_xid_tape(tmp_path / "none.tape"))
    assert none.recorded_thresholds is None
    assert none.thresholds(DEFAULT_THRESHOLDS) == DEFAULT_THRESHOLDS
    for raw in (None, [], "x", {"mig_pending_minutes": math.nan},
                {"mig_pending_minutes": math.inf}):
        assert thresholds_from_json(raw, DEFAULT_THRESHOLDS) == DEFAULT_THRESHOLDS


def test_gputui_record_keeps_the_sessions_thresholds(tmp_path: Path) -> None:
    """What ``gputui --record`` writes: the header holds every threshold the session ran
    with, and a replay of it judges by them."""
    from types import SimpleNamespace

    from gputui.domain.inputs import ClusterObjects
    from gputui.sources.tape.recorder import open_recorder

    ours = Settings(record_file=str(tmp_path / "session.rec"))
    ours = replace(ours, thresholds=replace(ours.thresholds, driver_startup_minutes=33.0,
                                            pool_label="example.com/pool"))
    source = SimpleNamespace(target=SimpleNamespace(context="prod", server="https://k"),
                             on_built=None)
    writer = open_recorder(ours, source, None)
    assert writer is not None and source.on_built == writer.objects
    writer.objects(ClusterObjects(context="prod"), 1_800_000_000.0)
    writer.close()
    reader = TapeReader.open(tmp_path / "session.rec")
    assert reader.thresholds(DEFAULT_THRESHOLDS) == ours.thresholds
