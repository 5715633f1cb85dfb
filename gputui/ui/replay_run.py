"""``run_replay``: what ``gputui replay FILE`` runs after the CLI built the settings.

The recording is opened before the terminal switches to the UI, so a missing, unreadable or
corrupt file is one line on stderr and exit 2, never a flash of a broken screen. No
kubeconfig is read and no writer is built: the app can only show the recording.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gputui.settings import Settings

#: epoch seconds beyond any calendar a header can print (year ~5000)
MAX_TIME = 1e11

if TYPE_CHECKING:  # loaded when a replay opens, not at import (tests/ui/test_layering.py)
    from gputui.domain.replay_cursor import ReplayCursor
    from gputui.sources.tape.source import TapeMetrics, TapeSource


def open_replay(settings: Settings, path: Path) -> tuple[TapeSource, TapeMetrics,
                                                          ReplayCursor]:
    """(source, metrics, cursor) for the recording at ``path``; raises ``TapeError``."""
    from gputui.domain.replay_cursor import ReplayCursor
    from gputui.sources.tape.format import TapeError
    from gputui.sources.tape.reader import TapeReader
    from gputui.sources.tape.source import TapeMetrics, TapeSource

    reader = TapeReader.open(path)
    if not all(math.isfinite(t) and abs(t) < MAX_TIME for t in (reader.start, reader.end)):
        raise TapeError(f"recording {path} is damaged (its times are not times)")
    # opens at the first complete moment, as check --replay names it: a session recorded
    # from its start spent its first seconds (or minutes, on a big cluster) loading
    cursor = ReplayCursor(reader.change_times(), reader.start, reader.end,
                          monotonic=time.monotonic, at=reader.first_complete())
    source = TapeSource(reader, cursor, reader.thresholds(settings.thresholds))
    metrics = TapeMetrics(reader, cursor, settings.refresh)
    return source, metrics, cursor


def run_replay(settings: Settings, file: str) -> int:
    """Open ``file``, run the TUI on it until quit; the exit code."""
    from gputui.sources.errors import SourceError
    from gputui.ui.replay_app import make_replay_app

    _say_reading(Path(file))
    try:
        source, metrics, cursor = open_replay(settings, Path(file))
    except SourceError as error:  # TapeError: not a recording, newer format, unreadable
        print(f"gputui: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the reader's own words are preferred; this is the floor
        print(f"gputui: cannot read recording {file}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    app = make_replay_app(settings, source, clock=lambda: cursor.position, metrics=metrics)
    app.exit_guard.hard_exit = True  # leave within 5 s of SIGHUP, SIGTERM or quit
    try:
        app.run()
    except KeyboardInterrupt:
        return 130
    finally:
        source.stop()
    code = int(app.return_code or 0)
    if app.exit_guard.exiting:
        from gputui.ui.exit_signals import end_process

        end_process(code)
    return code


#: recordings above this size take seconds to read (a 5,000-node hour is ~5 MB): say so
SAY_READING_BYTES = 1 << 20


def _say_reading(path: Path) -> None:
    """One line on a terminal while a big recording is read, before the screen opens: the
    operator sees why nothing happens yet (the live source says "loading" the same way)."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # open_replay says why in one line
    if size >= SAY_READING_BYTES and sys.stderr.isatty():
        from gputui.domain.sanitize import clean_line

        print(f"gputui: reading recording {clean_line(str(path))} "
              f"({size / (1 << 20):.1f} MB)…", file=sys.stderr, flush=True)
