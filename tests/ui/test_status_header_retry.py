"""The header's live part: current data from a struggling server says both."""

from __future__ import annotations

from gputui.domain.model import EMPTY_SNAPSHOT
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.widgets.status_header import HeaderState, connection_part


def test_live_with_a_retry_in_progress_says_both() -> None:
    status = SourceStatus(Connection.LIVE, last_update=1000.0,
                          retrying="429 Too Many Requests; retrying (Retry-After 1 s, attempt 2)")
    text, colour = connection_part(HeaderState(EMPTY_SNAPSHOT, status, now=1001.0))
    assert text.startswith("● live · ") and "429 Too Many Requests; retrying" in text
    assert colour == "warn"


def test_live_without_retries_is_just_live() -> None:
    text, colour = connection_part(HeaderState(EMPTY_SNAPSHOT, SourceStatus(
        Connection.LIVE, last_update=1000.0), now=1001.0))
    assert text.startswith("● live") and "retrying" not in text and colour == "ok"
