"""The header's first line in ``gputui replay``: which recording, at what time, playing or not.

``gputui ▸ replay of prod-east at 14:02:11 (recorded 2026-12-01)      ❚❚ paused``

Why its own line: a replay must never read as the live cluster (no "● live", no local
clock time that could be taken for now). Times are UTC, as the ``t`` prompt reads them
(:mod:`gputui.domain.at_time`). At 80 columns the context name is shortened first, then the
recording date goes; the play state always shows (``❚❚ paused``, ``❚❚ end``, ``▶ playing 4×``).
"""

from __future__ import annotations

import time

from rich.text import Text

from gputui.domain.replay_cursor import PlayState
from gputui.sources.base import SourceStatus
from gputui.ui.render.style import Palette


def utc_clock(epoch: float) -> str:
    """``14:02:11`` in UTC (``?`` for a time no calendar has: a recording may be hostile)."""
    return _utc("%H:%M:%S", epoch)


def utc_date(epoch: float) -> str:
    """``2026-12-01`` in UTC."""
    return _utc("%Y-%m-%d", epoch)


def _utc(form: str, epoch: float) -> str:
    try:
        return time.strftime(form, time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return "?"


def play_part(status: SourceStatus) -> tuple[str, str]:
    """(text, colour role) of the cursor's state; a message (a time that cannot be shown)
    is said instead."""
    if status.message:
        return f"✖ {status.message}", "crit"
    if status.play is PlayState.PLAYING:
        speed = "" if status.play_speed == 1.0 else f" {status.play_speed:g}×"
        return f"▶ playing{speed}", "ok"
    if status.play is PlayState.SEEKING:
        return "⟳ seeking…", "progress"
    return ("❚❚ end" if status.play is PlayState.END else "❚❚ paused"), "progress"


def replay_line(context: str, status: SourceStatus, width: int, palette: Palette) -> Text:
    """Line 1 of the header in a replay, at most ``width`` cells."""
    play, role = play_part(status)
    at = f" at {utc_clock(status.last_update)}" if status.last_update else ""
    recorded = f" (recorded {utc_date(status.recorded_at)})" if status.recorded_at else ""
    prefix = "gputui ▸ replay of "
    room = width - len(prefix) - len(at) - len(play) - 2
    if room - len(recorded) < min(len(context), 12):
        recorded = ""  # the date goes before the context name is cut short
    room -= len(recorded)
    name = context if len(context) <= room else context[:max(1, room - 1)] + "…"
    line = Text(prefix + name + at, style="bold", no_wrap=True)
    line.append(recorded)
    line.append(" " * max(1, width - line.cell_len - len(play)))
    line.append(play, style=palette.role(role))
    line.truncate(width, overflow="ellipsis")
    return line
