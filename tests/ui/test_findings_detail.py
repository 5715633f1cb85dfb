"""The findings view's detail wraps and scrolls at 80x24 (issue 29 item 6).

Before, the selected finding's message and hint sat in five lines that could not scroll: a
hint longer than that was cut and its end (what to do) could not be read at all.
"""

from __future__ import annotations

from gputui.ui.screens.findings import FindingsScreen
from tests.ui.conftest import FrozenApp, settle


def _screen_text(screen: FindingsScreen) -> str:
    return "\n".join(strip.text for strip in screen._compositor.render_strips())


async def test_a_long_hint_can_be_read_to_its_end_at_80x24(frozen_app: FrozenApp) -> None:
    app = frozen_app("validator-stuck")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FindingsScreen)
        longest = max(screen.table.findings.values(),
                      key=lambda f: len(f.message) + len(f.hint))
        assert len(longest.message) + len(longest.hint) > 5 * 78  # more than 5 lines
        for _ in range(len(screen.table.findings)):
            if screen.table.selected == longest:
                break
            await pilot.press("down")
        assert screen.table.selected == longest
        await settle(pilot)
        last_words = " ".join(longest.hint.split()[-2:])
        for _ in range(40):
            if last_words in _screen_text(screen):
                break
            await pilot.press("shift+down")
            await pilot.pause()
        assert last_words in _screen_text(screen)
        first_words = " ".join(longest.message.split()[:3])
        for _ in range(40):
            await pilot.press("shift+up")
        await pilot.pause()
        assert first_words in _screen_text(screen)
