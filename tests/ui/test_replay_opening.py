"""A replay opens at the recording's first complete moment (issue 29 item 11).

A session recorded from its start spends its first seconds (minutes, on a big cluster)
loading its lists; ``gputui replay`` opened there, on a screen of "policy loading…", while
``check --replay`` already named the first complete moment. Now both use that moment.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gputui.session import open_session
from gputui.settings import Settings
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.writer import TapeWriter
from tests.fixtures.tapes import T0, small_cluster


def _loading_tape(path: Path) -> Path:
    writer = TapeWriter(path, context="ctx", server="https://k")
    half = replace(small_cluster(2), loading=frozenset({"pods", "clusterpolicies"}))
    writer.objects(half, T0)
    assert writer.drain(10.0)
    writer.objects(replace(half, loading=frozenset({"clusterpolicies"})), T0 + 600)
    assert writer.drain(10.0)
    writer.objects(replace(half, loading=frozenset()), T0 + 1200)
    assert writer.drain(10.0)
    writer.objects(replace(small_cluster(3), loading=frozenset()), T0 + 1300)
    writer.close()
    return path


def test_the_replay_opens_where_the_session_had_read_everything(tmp_path: Path) -> None:
    path = _loading_tape(tmp_path / "loading.gputui-rec")
    session = open_session(Settings(), "replay", path)
    source, cursor = session.source, session.cursor
    assert session.replay is not None and cursor is not None
    try:
        assert cursor.start == T0
        assert cursor.position == T0 + 1200
        assert not session.replay.tape.objects_at(cursor.position).loading
    finally:
        source.stop()


def test_first_complete_is_none_when_the_session_never_read_everything(tmp_path: Path) -> None:
    path = tmp_path / "never.gputui-rec"
    writer = TapeWriter(path, context="ctx", server="https://k")
    writer.objects(replace(small_cluster(2), loading=frozenset({"pods"})), T0)
    writer.close()
    reader = TapeReader.open(path)
    assert reader.first_complete() is None
    session = open_session(Settings(), "replay", path)
    source, cursor = session.source, session.cursor
    assert session.replay is not None and cursor is not None
    try:
        assert cursor.position == T0  # nothing complete: the start, as before
    finally:
        source.stop()
