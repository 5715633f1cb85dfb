"""``:summary``: the handoff summary shown for review, then copied (OSC 52) or written to a
private file, with one line saying which; and its 80x24 snapshot on frozen data."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.audit import rfc3339
from gputui.settings import Settings
from gputui.ui import summary_flow
from gputui.ui.screens.summary import SummaryScreen
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.conftest import FrozenApp, settle


async def _open_summary(pilot: Any) -> None:
    await settle(pilot)
    await pilot.press("colon", *"summary", "enter")
    await settle(pilot)


def _messages(app: Any) -> list[str]:
    return [notification.message for notification in app._notifications]


def _write_session_audit(path: Path, server: str) -> None:
    """A cordon on the cluster at ``server`` (the frozen recordings have no kube-system UID:
    the summary matches by URL then, and says so)."""
    now = time.time()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = [{"id": "1", "time": rfc3339(now), "phase": "intent", "user": "alice",
              "cluster": {"server": server, "uid": "uid-1"},
              "action": "cordon", "targets": ["gke-prod-h100-pool-7f3a-4vvm"]},
             {"id": "1", "time": rfc3339(now), "phase": "outcome", "result": "ok: cordoned"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def test_summary_then_y_copies_it_with_osc52(frozen_app: FrozenApp,
                                                  tmp_path: Path) -> None:
    audit = tmp_path / "state" / "audit.jsonl"
    app = frozen_app("upgrade-failed", settings=Settings(audit_log=str(audit)))
    async with app.run_test(size=(100, 40)) as pilot:
        # after the session began: it is this session's
        _write_session_audit(audit, load_recording("upgrade-failed", SCENARIOS).objects.server)
        await _open_summary(pilot)
        screen = app.screen
        assert isinstance(screen, SummaryScreen)
        for finding in app.snapshot.findings:
            assert f"**{finding.code}**" in screen.markdown
        assert "**cordon** on gke-prod-h100-pool-7f3a-4vvm by alice: ok: cordoned" in \
            screen.markdown
        await pilot.press("y")
        await settle(pilot)
        assert app.clipboard == screen.markdown
        assert any(m.startswith("Summary sent to the clipboard with OSC 52") for m in
                   _messages(app))
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, SummaryScreen)


async def test_s_on_findings_opens_it(frozen_app: FrozenApp, tmp_path: Path) -> None:
    app = frozen_app("upgrade-failed", settings=Settings(audit_log=str(tmp_path / "a.jsonl")))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)


async def test_a_remapped_copy_key_is_the_one_shown_and_used(frozen_app: FrozenApp,
                                                             tmp_path: Path) -> None:
    settings = Settings(audit_log=str(tmp_path / "a.jsonl"), keymap={"summary.copy": "C"})
    app = frozen_app("upgrade-failed", settings=settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await _open_summary(pilot)
        title = app.screen.query_one("#summary-title")
        assert "C: copy to the clipboard" in str(title.render())
        await pilot.press("C")
        await settle(pilot)
        assert app.clipboard.startswith("# GPU cluster handoff")


@pytest.mark.parametrize("setting,limit,why", [
    ("file", summary_flow.OSC52_LIMIT, "clipboard: file is set"),
    ("osc52", 16, "too large for OSC 52"),
    ("osc53", summary_flow.OSC52_LIMIT, "unknown clipboard setting 'osc53'"),
])
async def test_a_file_when_the_terminal_cannot_take_it(
        frozen_app: FrozenApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        setting: str, limit: int, why: str) -> None:
    monkeypatch.setattr(summary_flow, "OSC52_LIMIT", limit)
    audit = tmp_path / "state" / "audit.jsonl"
    app = frozen_app("upgrade-failed", settings=Settings(audit_log=str(audit),
                                                         clipboard=setting))
    async with app.run_test(size=(100, 40)) as pilot:
        await _open_summary(pilot)
        screen = app.screen
        assert isinstance(screen, SummaryScreen)
        await pilot.press("y")
        await settle(pilot)
        (written,) = (audit.parent).glob("summary-*.md")
        assert written.read_text(encoding="utf-8") == screen.markdown
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
        assert app.clipboard == ""  # nothing went out through the terminal
        assert f"Summary written to {written} ({why}" in " ".join(_messages(app))


def test_summary_view_80x24(snap_compare: Any, frozen_app: FrozenApp, tmp_path: Path) -> None:
    app = frozen_app("upgrade-failed", settings=Settings(audit_log=str(tmp_path / "a.jsonl")))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_open_summary)
