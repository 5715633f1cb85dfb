"""The recording's timeline (``gputui --record``): events go into the file while the app
shows the session the recorder is tapped into, and none after ``:ctx`` replaces it,
even a switch back (a new session that nothing records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.domain.timeline_event import make_event
from gputui.session import session_of
from gputui.settings import Settings
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.writer import TapeWriter
from gputui.ui.app import make_app
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording


def test_events_are_recorded_until_the_session_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "session.gputui-rec"
    writer = TapeWriter(path, context="prod", server="https://k")
    writer.objects(ClusterObjects(context="prod"), 1000.0)
    recording = load_recording("driver-crashloop", SCENARIOS)

    def session(recorder: TapeWriter | None = None) -> Any:
        return session_of(Settings(), ReplaySource.from_recording(recording),
                          recorder=recorder)

    app = make_app(Settings(), session(writer))
    assert app.timelines.sink is not None
    record = app.timelines.sink
    record([make_event(1001.0, "cordon", "gpu-1", "cordoned")])
    app.session = session()  # :ctx staging
    record([make_event(1002.0, "cordon", "gpu-2", "cordoned")])
    app.session = session()  # :ctx prod again: a new session, not tapped
    record([make_event(1003.0, "uncordon", "gpu-1", "uncordoned")])
    writer.objects(ClusterObjects(context="prod"), 1004.0)
    writer.close()
    events = TapeReader.open(path).timeline_until(2000.0)
    assert [(e["kind"], e["node"]) for e in events] == [("cordon", "gpu-1")]


class BehindWriter:
    """A recorder still writing a big frame when the program leaves."""

    path = Path("/tmp/session.gputui-rec")
    closed = False
    error = None  # no write failed

    def drain(self, timeout: float) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def test_a_recorder_behind_at_exit_is_said_not_waited_for(capsys: object) -> None:
    """The exit deadline would kill a close() that waits for a big frame: the operator is
    told the recording ends early instead, and nothing waits."""
    from gputui.ui.run import _close_recorder

    behind = BehindWriter()
    _close_recorder(behind)  # type: ignore[arg-type]
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert not behind.closed
    assert err.count("\n") == 1 and "session.gputui-rec" in err and "ends at its last" in err


def test_a_recorder_that_caught_up_is_closed_whole(tmp_path: Path) -> None:
    import gzip

    from gputui.ui.run import _close_recorder

    path = tmp_path / "s.gputui-rec"
    writer = TapeWriter(path, context="prod", server="https://k")
    writer.objects(ClusterObjects(context="prod"), 1000.0)
    _close_recorder(writer)
    assert gzip.decompress(path.read_bytes())  # the stream is ended: zcat reads it all
