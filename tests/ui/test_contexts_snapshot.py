"""SVG snapshot of the ``:ctx`` view at 80x24 (frozen data, frozen clock): the current
context marked, a read-only one in the warning colour, a long server cut at the edge, and a
hostile name shown cleaned. Regenerate on purpose with ``--snapshot-update``."""

from __future__ import annotations

from typing import Any

from gputui.domain.sanitize import clean_line
from gputui.sources.contexts import ContextEntry
from gputui.ui.screens.contexts import ContextsScreen
from tests.ui.conftest import FrozenApp
from tests.ui.helpers import settle_for_snapshot

HOSTILE = "evil\x1b]2;PWNED\x07"
ENTRIES = (
    ContextEntry("lab-a", "lab-a", "lab", "https://10.0.0.1:6443", "alice", current=True),
    ContextEntry("prod-eu-west-1", "prod-eu-west-1", "prod", "https://prod-eu-west-1."
                 "k8s.example.com:6443", "oncall", read_only=True),
    ContextEntry(HOSTILE, clean_line(HOSTILE), "x", "https://x.example", "mallory"),
)


def test_ctx_view_80x24(snap_compare: Any, frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        await app.push_screen(ContextsScreen(ENTRIES))
        await settle_for_snapshot(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
