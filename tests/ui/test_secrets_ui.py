"""The TUI never shows or logs a credential: a worker that fails says one scrubbed sentence
and the app goes on; a crash report has no locals and no secret."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.session import session_of
from gputui.actions.runner import Runner
from gputui.logsetup import configure_logging, remove_logging
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.crash import QuietCrash, crash_report
from tests.helpers import KEY_DATA, SECRETS, TOKEN, assert_no_secret, planted
from tests.ui.helpers import until


@pytest.fixture
def debug_log(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "debug.log"
    handler = configure_logging(path)
    yield path
    remove_logging(handler)


def _leaky(self: Runner) -> None:
    """A permission check that fails as urllib3 does, quoting the header (and holding it)."""
    header = f"Bearer {TOKEN}\n"
    raise ValueError(f"Invalid header value {header.encode()!r}")


async def test_a_failing_permission_worker_says_one_scrubbed_sentence(
        api_only: EmulatedCluster, tmp_path: Path, debug_log: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    api_only.set_tokens(frozenset({TOKEN}))
    monkeypatch.setattr(Runner, "check_permissions", _leaky)
    settings = Settings(kubeconfig=str(planted(tmp_path / "kc", api_only.url)),
                        audit_log=str(tmp_path / "audit.jsonl"))
    source = open_source(settings, watch_timeout=5, xid_every=0)
    writer = writer_for_source(source, read_only=False)
    app = make_app(settings, session_of(settings, source, writer=writer))
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            told = lambda: [n.message for n in app._notifications]
            await until(pilot, lambda: any("checking permissions failed" in m for m in told()),
                        why=told)
            await until(pilot, lambda: "live" in str(app.status.connection).lower())
            assert app.is_running  # the worker's failure did not end the app
            screen = app.export_screenshot()
            message = next(m for m in told() if "checking permissions failed" in m)
            assert message.startswith("checking permissions failed: ValueError: Invalid header")
    finally:
        source.stop()
        if writer is not None:
            writer.close()
    audit = tmp_path / "audit.jsonl"
    assert "Traceback" in debug_log.read_text()  # the log has what a bug report needs ...
    assert_no_secret(message, screen, debug_log.read_text(),  # ... and no secret anywhere
                     audit.read_text() if audit.exists() else "")


def test_the_crash_report_has_no_locals_and_no_secret() -> None:
    planted_locals = {"token": TOKEN, "key": KEY_DATA}
    try:
        raise ValueError(f"Invalid header value {('Bearer ' + TOKEN + chr(10)).encode()!r}"
                         f" ({len(planted_locals)} locals)")
    except ValueError:
        report = crash_report(120).plain
    assert "ValueError: Invalid header value" in report
    assert "test_the_crash_report_has_no_locals" in report  # the frames are kept
    assert " locals " not in report  # the locals panel is not (Textual's has one a frame)
    for secret in SECRETS:
        assert secret not in report


async def test_an_unhandled_crash_prints_the_quiet_report(
        api_only: EmulatedCluster, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Textual's own report shows locals; gputui's app uses the quiet one."""
    assert GpuTuiApp._fatal_error is QuietCrash._fatal_error
    settings = Settings(kubeconfig=str(planted(tmp_path / "kc", api_only.url)), read_only=True)
    source = open_source(settings, watch_timeout=5, xid_every=0)
    app = make_app(settings, session_of(settings, source))

    def boom() -> None:
        token = TOKEN  # noqa: F841 - a local Textual's report would print
        raise RuntimeError(f"crashed holding Bearer {TOKEN}")

    try:
        with pytest.raises(RuntimeError):
            async with app.run_test(size=(120, 30)) as pilot:
                await until(pilot, lambda: "live" in str(app.status.connection).lower())
                app.call_later(boom)
                await until(pilot, lambda: not app.is_running)
    finally:
        source.stop()
    printed = capfd.readouterr()
    assert "RuntimeError" in printed.err + printed.out
    assert_no_secret(printed.out, printed.err)
