"""``run_tui``: what ``gputui`` and ``gputui --demo`` run after the CLI built the settings.

Order matters for the operator: the kubeconfig (or the emulated cluster) is opened *before*
the terminal switches to the UI, so a missing file or unknown context is one line on stderr
and exit 2, not a flash of a broken screen. An unreachable server is not an error here: the
source keeps retrying and the header says "disconnected, retrying". Whatever happens, the
source (and the emulated cluster it may own) is stopped on the way out, and the process is
gone within 5 s of SIGHUP, SIGTERM or quit (:mod:`gputui.ui.exit_signals`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gputui.domain.sanitize import clean_line
from gputui.settings import Settings

if TYPE_CHECKING:  # types only: the TUI's modules load after the kubeconfig is read
    from gputui.domain.timeline import TimelineEvent
    from gputui.sources.tape.writer import TapeWriter
    from gputui.ui.app import GpuTuiApp
    from gputui.ui.timeline_flow import TimelineSink


def _stop_quietly(stop: Callable[[], None]) -> None:
    """Stop the source; a failure while leaving must not become a traceback."""
    try:
        stop()
    except Exception as error:  # noqa: BLE001 - we are exiting anyway; say it in one line
        from gputui.logsetup import redact

        detail = (redact(str(error)).splitlines() or [type(error).__name__])[0]
        print(f"gputui: while stopping: {detail}", file=sys.stderr)


def run_tui(settings: Settings) -> int:
    """Open the source for ``settings``, run the TUI until quit, stop everything; exit code."""
    from gputui.sources.connect import open_metrics, open_source
    from gputui.sources.errors import SourceError

    try:
        if settings.demo:  # the emulator is wired here, above sources (gputui.demo)
            from gputui.demo import open_demo_source

            source = open_demo_source(settings)
        else:
            source = open_source(settings)
    except SourceError as error:
        print(f"gputui: {error}", file=sys.stderr)
        return 2
    from gputui.sources.writer import writer_for_source
    from gputui.ui.app import make_app

    clock: Callable[[], float] = getattr(source, "clock", time.time)
    from gputui.sources.contexts import is_read_only

    # a context matching read_only_contexts is read-only from the start (--context prod-1)
    writer = writer_for_source(source, read_only=is_read_only(settings, source.target.context))
    metrics = open_metrics(settings, source)
    try:
        from gputui.sources.tape.recorder import open_recorder

        recorder = open_recorder(settings, source, metrics)
    except SourceError as error:  # --record: an unwritable file, before the screen changes
        print(f"gputui: {error}", file=sys.stderr)
        _stop_quietly(source.stop)
        return 2
    try:
        app = make_app(settings, source, clock=clock, writer=writer, metrics=metrics)
        if recorder is not None:
            app.recorded_source = source
            app.timeline_sink = _timeline_recorder(recorder, app)
            app.recording_watch.problem = lambda: recorder.error
        # the real program leaves within 5 s of SIGHUP, SIGTERM or quit, whatever the
        # terminal or the server does (tests run apps in-process and never end it)
        app.exit_guard.hard_exit = True
        app.run()
    except KeyboardInterrupt:
        return 130
    finally:
        if recorder is not None:  # first: the process is gone 4.5 s after quit began
            _close_recorder(recorder, clock())
        _stop_quietly(source.stop)
        if writer is not None:
            _stop_quietly(writer.close)
    code = int(app.return_code or 0)
    if app.exit_guard.exiting:  # quit or a signal: no finalisation to wait for or crash in
        from gputui.ui.exit_signals import end_process

        end_process(code)
    return code


#: seconds the recorder may take at exit to write what it was handed (the exit deadline
#: leaves little more once the screen is restored)
RECORDER_GRACE = 1.0


def _close_recorder(recorder: TapeWriter, at: float | None = None) -> None:
    """Close the recording if the writer has caught up; else say what it lacks. A writer
    behind the source (the first full read of a 5,000-node cluster on a busy machine is a
    frame of 40,000 pods) would be killed mid-frame by the exit deadline: the file then
    reads up to its last complete frame, and the operator must know it ends early."""
    if recorder.error is not None:  # a write failed (a full disk): the file ends there
        print(f"gputui: {clean_line(recorder.error)}; the recording ends where it stopped",
              file=sys.stderr)
        _stop_quietly(lambda: recorder.close(at))
        return
    if recorder.drain(RECORDER_GRACE):
        _stop_quietly(lambda: recorder.close(at))
        return
    print(f"gputui: recording {recorder.path}: the newest builds were still being written "
          "at exit and are not in it; it ends at its last complete frame", file=sys.stderr)


def _timeline_recorder(recorder: TapeWriter, app: GpuTuiApp) -> TimelineSink:
    """The recording's timeline: events only while the app shows the recorded source
    (``app.recording``). The recorder is tapped into the first context's source and feed,
    so after ``:ctx`` no objects are recorded, and no events either (README, Recording
    and replay)."""

    def record(events: Sequence[TimelineEvent]) -> None:
        if app.recording:
            recorder.timeline([event.to_json() for event in events])

    return record
