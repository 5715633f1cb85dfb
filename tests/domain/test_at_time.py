"""Times typed by an operator (``check --replay --at``, the replay's ``t`` key)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gputui.domain.at_time import format_at, parse_at


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


START = utc("2026-12-01T14:00:10.5")
END = utc("2026-12-01T15:10:00")


@pytest.mark.parametrize(("text", "expected"), [
    ("14:02", utc("2026-12-01T14:02:00")),
    ("14:02:11", utc("2026-12-01T14:02:11")),
    ("14:02:11.25", utc("2026-12-01T14:02:11.25")),
    ("14:00", START),        # the minute it began in means its first moment
    ("14:00:10", START),
    ("2026-12-01T14:02:11Z", utc("2026-12-01T14:02:11")),
    ("2026-12-01T15:02:11+01:00", utc("2026-12-01T14:02:11")),
    ("+90s", START + 90), ("+5m", START + 300), ("+1h", START + 3600), ("+0", START),
    ("-30s", END - 30), (" 15:10 ", END),
])
def test_accepted_forms(text: str, expected: float) -> None:
    assert parse_at(text, START, END) == pytest.approx(expected)


def test_clock_time_after_midnight_is_the_next_day() -> None:
    start, end = utc("2026-12-01T23:50:00"), utc("2026-12-02T00:20:00")
    assert parse_at("00:05", start, end) == utc("2026-12-02T00:05:00")
    assert parse_at("23:55", start, end) == utc("2026-12-01T23:55:00")


@pytest.mark.parametrize(("text", "message"), [
    ("13:59", ("outside the recording, which runs from 2026-12-01 14:00:10 UTC to "
               "2026-12-01 15:10:00 UTC")),
    ("15:11", "outside the recording"),
    ("+2h", "outside the recording"),
    ("-2h", "outside the recording"),
    ("25:00", "no such time of day"),
    ("2026-12-01T14:02:11", "has no zone"),
    ("yesterday", "cannot read time 'yesterday': use HH:MM"),
    ("", "cannot read time"),
    ("+5d", "cannot read time"),
])
def test_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        parse_at(text, START, END)
    assert "\n" not in str(caught.value)


def test_a_recording_of_one_moment_says_so() -> None:
    """Issue 27: ``--at=-1s`` on a one-moment recording said "runs from X to X"."""
    with pytest.raises(ValueError) as raised:
        parse_at("-1s", START, START)
    assert str(raised.value) == (f"time -1s is outside the recording, which holds one moment "
                                 f"only, {format_at(START)} (use --at=+0s)")
    assert parse_at("+0s", START, START) == START
