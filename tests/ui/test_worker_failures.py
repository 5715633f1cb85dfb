"""Every worker's failure takes one path (issue 28): logged, scrubbed, said in one line.

Before, the pod-log worker showed an exception's raw text (a server URL with its password,
and nothing in the debug log), and the timeline's read of the audit log failed in silence.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from gputui.ui.screens.pod_log import PodLogScreen
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import until

SECRET_URL = "https://oncall:hunter2-secret@api.prod.example:6443/api/v1/pods"


def _failing(*_args: Any, **_kwargs: Any) -> list[str]:
    raise ConnectionError(f"connection reset while reading {SECRET_URL}")


async def test_a_failed_pod_log_read_is_scrubbed_logged_and_shown_on_its_screen(
        frozen_app: FrozenApp, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    source = ReplaySource.from_recording(load_recording("driver-crashloop", SCENARIOS))
    monkeypatch.setattr(source, "pod_log", _failing)
    app = frozen_app("driver-crashloop", source=source)
    caplog.set_level(logging.ERROR, logger="gputui.ui")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PodLogScreen)
        assert screen.result is not None and screen.result.error
        shown = screen.result.error
        assert shown.startswith("reading the pod log failed: ConnectionError"), shown
        assert "hunter2" not in shown and "api.prod.example" in shown
        assert app.worker_failures.said == [shown]
        assert app.is_running  # the session goes on
    assert any("reading the pod log failed" in r.getMessage() for r in caplog.records)
    assert all("hunter2" not in r.getMessage() for r in caplog.records)


async def test_a_failed_audit_read_for_the_timeline_is_said(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)

        def read() -> None:
            raise PermissionError(13, "Permission denied", "/var/log/gputui/audit.jsonl")

        app.run_worker(read, thread=True, group="timeline-audit", exit_on_error=False)
        await until(pilot, lambda: app.worker_failures.said)  # a failure is said
        assert len(app.worker_failures.said) == 1
        assert app.worker_failures.said[0].startswith(
            "reading the audit log for the timeline failed: PermissionError")
        assert app.is_running


async def test_a_bug_in_a_worker_of_no_known_group_does_not_end_the_session(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.run_worker(lambda: 1 / 0, thread=True, name="odd", group="odd",
                       exit_on_error=False)
        await until(pilot, lambda: app.worker_failures.said)  # a failure is said
        assert app.worker_failures.said == [
            "the background task odd failed: ZeroDivisionError: division by zero"]
