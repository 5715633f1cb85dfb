"""``run_tui``: what ``gputui``, ``gputui --demo`` and ``gputui replay FILE`` run after the
CLI built the settings.

Order matters for the operator: the session (a kubeconfig's cluster, the emulated one, or a
recording) is opened *before* the terminal switches to the UI, so a missing file, an unknown
context or a corrupt recording is one line on stderr and exit 2, not a flash of a broken
screen. An unreachable server is not an error here: the source keeps retrying and the header
says "disconnected, retrying". Whatever happens, the session (and the emulated cluster it
may own) is stopped on the way out, and the process is gone within 5 s of SIGHUP, SIGTERM
or quit (:mod:`gputui.ui.exit_signals`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gputui.domain.sanitize import clean_line
from gputui.settings import Settings

if TYPE_CHECKING:  # types only: the TUI's modules load after the session is opened
    from gputui.session import Session, SessionKind
    from gputui.sources.tape.writer import TapeWriter

#: recordings above this size take seconds to read (a 5,000-node hour is ~5 MB): say so
SAY_READING_BYTES = 1 << 20
#: seconds the recorder may take at exit to write what it was handed (the exit deadline
#: leaves little more once the screen is restored)
RECORDER_GRACE = 1.0


def _stop_quietly(stop: Callable[[], None]) -> None:
    """Stop a part of the session; a failure while leaving must not become a traceback."""
    try:
        stop()
    except Exception as error:  # noqa: BLE001 - we are exiting anyway; say it in one line
        from gputui.logsetup import redact

        detail = (redact(str(error)).splitlines() or [type(error).__name__])[0]
        print(f"gputui: while stopping: {detail}", file=sys.stderr)


def run_tui(settings: Settings, kind: SessionKind | None = None,
            recording: str | None = None) -> int:
    """Open the session (``kind``: ``live`` or ``demo`` from the settings, ``replay`` of
    ``recording``), run the TUI until quit, stop everything; the exit code."""
    from gputui.session import open_session, session_kind
    from gputui.sources.errors import SourceError

    kind = kind or session_kind(settings, recording)
    path = Path(recording) if recording is not None else None
    if path is not None:
        _say_reading(path)
    try:
        session = open_session(settings, kind, path)
    except SourceError as error:  # and TapeError: not a recording, a newer format
        print(f"gputui: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the reader's own words are preferred; this is the floor
        print(f"gputui: cannot read recording {recording}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    return _run(settings, session)


def _run(settings: Settings, session: Session) -> int:
    if session.replay is None:  # a cluster's first lists transfer while the UI is imported
        session.start_early()
    try:
        from gputui.ui.app import make_app

        app = make_app(settings, session, hard_exit=True)
    except BaseException:
        _stop_quietly(session.stop)
        raise
    try:
        app.run()
    except KeyboardInterrupt:
        return 130
    finally:
        if session.recorder is not None:  # first: the process is gone 4.5 s after quit
            _close_recorder(session.recorder, session.clock())
        _stop_quietly(session.stop)
        _stop_quietly(session.close_writers)
    code = int(app.return_code or 0)
    if app.exit_guard.exiting:  # quit or a signal: no finalisation to wait for or crash in
        from gputui.ui.exit_signals import end_process

        end_process(code)
    return code


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


def _say_reading(path: Path) -> None:
    """One line on a terminal while a big recording is read, before the screen opens: the
    operator sees why nothing happens yet (the live source says "loading" the same way)."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # opening the session says why in one line
    if size >= SAY_READING_BYTES and sys.stderr.isatty():
        print(f"gputui: reading recording {clean_line(str(path))} "
              f"({size / (1 << 20):.1f} MB)…", file=sys.stderr, flush=True)
