"""Keys typed ahead in one burst (as SSH delivers them) are never lost or misrouted.

The burst is posted to the app all at once, before any of it is processed, which is what a
terminal read of several bytes does; ``pilot.press`` would wait between keys and hide the bug.
"""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from gputui.ui.app import GpuTuiApp
from gputui.ui.screens.command_line import CommandLine
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import until

_NAMES = {":": "colon", "/": "slash", "\r": "enter", "\x1b": "escape", "=": "equals_sign",
          "-": "minus", " ": "space"}


def burst(app: GpuTuiApp, text: str) -> None:
    """Post every key of ``text`` at once, as one read from the terminal would."""
    for char in text:
        key = _NAMES.get(char, char)
        app.post_message(events.Key(key, None if key in ("enter", "escape") else char))


@pytest.mark.parametrize("repeat", range(3))
async def test_command_line_burst_switches_view(frozen_app: FrozenApp, repeat: int) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, ":upgrades\r")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen),
                    why=lambda: f"still on {type(app.screen).__name__}")
        assert app.current_mode == "upgrades" and len(app.screen_stack) == 1


async def test_keys_after_enter_go_to_the_new_view(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, ":mig\r:findings\r")
        await until(pilot, lambda: app.current_mode == "findings")


async def test_filter_burst_reaches_the_prompt(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        burst(app, "/a100\r")
        prompt = screen.query_one("#node-filter", Input)
        await until(pilot, lambda: screen.table.node_filter.text == "a100",
                    why=lambda: f"filter is {screen.table.node_filter.text!r}, "
                                f"prompt {prompt.value!r}")
        assert prompt.value == "a100"


async def test_command_line_burst_keeps_every_character(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, ":upgra")
        await until(pilot, lambda: isinstance(app.screen, CommandLine)
                    and app.screen.query_one(Input).value == "upgra")
        assert app.typeahead.delayed > 0  # the burst did have to wait


async def test_help_burst_opens_and_closes(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(app, "?\x1b2")
        await until(pilot, lambda: app.current_mode == "upgrades" and len(app.screen_stack) == 1)


async def test_palette_burst_keeps_every_character(frozen_app: FrozenApp) -> None:
    from textual.command import CommandInput, CommandPalette

    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.post_message(events.Key("ctrl+p", None))
        burst(app, "upgrades")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette)
                    and app.screen.query_one(CommandInput).value == "upgrades")
