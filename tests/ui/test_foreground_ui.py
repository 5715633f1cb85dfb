"""The app tells its live source what the screen needs (``gputui.sources.foreground``):
that a screen is up, when it painted the whole node list, and each key it must answer
first. Through the real source on the emulated API server."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.sources.foreground import KEY_CLAIM, Foreground
from tests.ui.helpers import LiveApp, cluster, live_app, ready, until  # noqa: F401 - fixtures


async def test_the_app_says_it_listens_painted_the_nodes_and_answers_keys_first(
        live_app: LiveApp, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[tuple[str, Any]] = []
    shown, claim = Foreground.shown, Foreground.claim

    def noting_shown(self: Foreground, loading: Any) -> None:
        said.append(("shown", frozenset(loading)))
        shown(self, loading)

    def noting_claim(self: Foreground, seconds: float = KEY_CLAIM) -> None:
        said.append(("claim", seconds))
        claim(self, seconds)

    monkeypatch.setattr(Foreground, "shown", noting_shown)
    monkeypatch.setattr(Foreground, "claim", noting_claim)
    app = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot, app)
        foreground = app.session.foreground
        assert foreground is app.source.foreground  # type: ignore[attr-defined]
        assert foreground.expected and not foreground.building_for_nobody()
        # the whole node list was painted before the pods were read, and told
        assert any(what == "shown" and "nodes" not in loading and "pods" in loading
                   for what, loading in said)
        assert foreground.wait_nodes_shown(0.0)
        said.clear()
        await pilot.press("down")
        await until(pilot, lambda: screen.table.cursor_row == 1)
        assert ("claim", KEY_CLAIM) in said
