"""A recording that stops (a write fails: a full disk) is said at once and at exit (issue 27:
the debug log said ``stopped: No space left on device`` while the header kept ``● rec``
and nothing was said at exit, so the operator believed the incident was being recorded).

The full disk is real: the writer's file descriptor is pointed at ``/dev/full``, whose
every write fails with ENOSPC."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gputui.domain.inputs import ClusterObjects
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.tape.writer import TapeWriter
from gputui.ui.widgets.status_header import HeaderState, render_header
from tests.helpers import poll
from tests.ui.helpers import (  # noqa: F401 - cluster, live_app: fixtures
    LiveApp,
    cluster,
    header_text,
    live_app,
    until,
)


def _on_a_full_disk(path: Path) -> TapeWriter:
    writer = TapeWriter(path, context="gputui-demo", server="https://k")
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, writer._fd)  # what a disk that filled up answers from now on
    os.close(full)
    return writer


def test_a_full_disk_stops_the_writer_with_the_reason(tmp_path: Path) -> None:
    writer = _on_a_full_disk(tmp_path / "s.gputui-rec")
    writer.objects(ClusterObjects(context="gputui-demo"), 1000.0)
    poll(lambda: writer.error is not None, timeout=10)  # the writer's thread meets it
    assert writer.error is not None and "No space left on device" in writer.error


def test_the_header_says_the_recording_stopped() -> None:
    line = render_header(HeaderState(recording=True, recording_stopped=True), 80).plain
    assert "✖ rec stopped" in line and "● rec" not in line


async def test_the_app_says_it_within_seconds(live_app: LiveApp, cluster: EmulatedCluster,
                                              tmp_path: Path) -> None:
    writer = _on_a_full_disk(tmp_path / "s.gputui-rec")
    app = live_app(read_only=True)
    notes: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        app.recording_watch.recorded = app.session
        app.session.recorder = writer
        await until(pilot, lambda: "● rec" in header_text(app))
        writer.objects(ClusterObjects(context="gputui-demo"), 1000.0)
        started = time.monotonic()
        await until(pilot, lambda: "✖ rec stopped" in header_text(app), timeout=10)
        assert time.monotonic() - started < 5  # the header refreshes every second
        assert any("No space left on device" in n and "no longer recorded" in n
                   for n in notes), notes
    writer.close()


def test_exit_says_where_the_recording_ends(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from gputui.ui.run import _close_recorder

    writer = _on_a_full_disk(tmp_path / "s.gputui-rec")
    writer.objects(ClusterObjects(context="gputui-demo"), 1000.0)
    poll(lambda: writer.error is not None, timeout=10)  # the writer's thread meets it
    _close_recorder(writer)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err
    assert "the recording ends where it stopped" in err


async def test_the_header_under_a_dialog_keeps_moving(live_app: LiveApp,
                                                      cluster: EmulatedCluster,
                                                      tmp_path: Path) -> None:
    """Issue 27: the header's clock stayed frozen for over a minute while a drain dialog
    was open: the header under a dialog is the one the operator sees, and it is refreshed."""
    from gputui.ui.screens.confirm import ConfirmScreen
    from gputui.ui.widgets.status_header import StatusHeader

    writer = _on_a_full_disk(tmp_path / "s.gputui-rec")
    app = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.recording_watch.recorded = app.session
        app.session.recorder = writer
        await until(pilot, lambda: "● rec" in header_text(app)
                    and app.runner is not None and not app.runner.permissions.pending)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        below = app.screen_stack[-2]
        writer.objects(ClusterObjects(context="gputui-demo"), 1000.0)
        await until(pilot, lambda: any("✖ rec stopped" in h.render().plain
                                       for h in below.query(StatusHeader)), timeout=10)
        assert isinstance(app.screen, ConfirmScreen)
    writer.close()
