"""Reading a time typed by an operator into a moment of a recording.

Used by ``gputui check --replay FILE --at TIME`` and the replay's ``t`` key. Operators
think in the clock they saw on screen (UTC times of day), in timestamps pasted from an
alert (RFC 3339), or relative to the recording ("90 s in", "30 s before the end"), so all
three are accepted. A time outside the recording is an error naming its range rather than
a silent clamp: "the findings at 14:02" must be the findings at 14:02.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["format_at", "parse_at"]

_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?")
_RELATIVE = re.compile(r"([+-])(\d+(?:\.\d+)?)([smh]?)")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
_FORMS = "HH:MM[:SS] (UTC), 2026-12-01T14:02:11Z, +90s/+5m/+1h from the start or -30s from the end"


def parse_at(text: str, start: float, end: float) -> float:
    """Epoch seconds for ``text`` within [``start``, ``end``]; ValueError (one line) if not.

    Accepts ``HH:MM[:SS]`` (UTC, on the day of ``start``, or the next day when the
    recording crosses midnight and the time is before ``start``'s), RFC 3339, ``+90s``,
    ``+5m``, ``+1h`` (from ``start``) and ``-30s`` (from ``end``).
    """
    typed = text.strip()
    at = _relative(typed, start, end)
    if at is None:
        at = _clock(typed, start)
    if at is None:
        at = _rfc3339(typed)
    if at is None:
        raise ValueError(f"cannot read time {typed[:40]!r}: use {_FORMS}")
    if not start <= at <= end:
        raise ValueError(f"time {typed[:40]} is outside the recording, which "
                         + (f"holds one moment only, {format_at(start)} (use --at=+0s)"
                            if end <= start else
                            f"runs from {format_at(start)} to {format_at(end)}"))
    return at


def _relative(text: str, start: float, end: float) -> float | None:
    match = _RELATIVE.fullmatch(text)
    if match is None:
        return None
    sign, amount, unit = match.groups()
    seconds = float(amount) * _UNIT[unit]
    return start + seconds if sign == "+" else end - seconds


def _clock(text: str, start: float) -> float | None:
    match = _CLOCK.fullmatch(text)
    if match is None:
        return None
    hour, minute, second, fraction = match.groups()
    if int(hour) > 23 or int(minute) > 59 or int(second or 0) > 59:
        raise ValueError(f"cannot read time {text!r}: no such time of day")
    day = datetime.fromtimestamp(start, UTC).replace(hour=0, minute=0, second=0,
                                                      microsecond=0)
    moment = day + timedelta(hours=int(hour), minutes=int(minute), seconds=int(second or 0),
                             microseconds=int((fraction or "0").ljust(6, "0")))
    at = moment.timestamp()
    precision = 60.0 if second is None else 1.0 if fraction is None else 1e-6
    if start - precision < at < start:
        return start  # the minute (or second) the recording began in: its first moment
    if at < start:  # before the recording began that day: the recording crossed midnight
        at += 86400.0
    return at


def _rfc3339(text: str) -> float | None:
    if "T" not in text.upper():
        return None
    try:
        moment = datetime.fromisoformat(text.upper())
    except ValueError:
        return None
    if moment.tzinfo is None:
        raise ValueError(f"time {text[:40]} has no zone: add Z for UTC or an offset")
    return moment.timestamp()


def format_at(at: float) -> str:
    """A moment as the errors and ``check --replay`` name it (``2026-12-01 14:02:11 UTC``)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
