"""The palette shows each command's ``:`` name and its whole description (issue 29 item 11).

Before, an entry showed its title and tooltip only: the ``:`` name an operator types next
time was nowhere, and typing it (``max-parallel``) found nothing by name.
"""

from __future__ import annotations

from textual.command import CommandPalette

from gputui.ui.commands import by_alias, palette_commands
from gputui.ui.palette import command_name
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import palette_searched


def _entries(palette: CommandPalette) -> list[str]:
    options = palette.query_one("CommandList")
    return [str(options.get_option_at_index(i).prompt)  # type: ignore[attr-defined]
            for i in range(options.option_count)]  # type: ignore[attr-defined]


async def test_every_entry_names_its_colon_command_and_whole_tooltip(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await palette_searched(pilot, palette)
        entries = _entries(palette)
        for cmd in palette_commands():
            if not cmd.aliases:
                continue
            mine = [e for e in entries if e.startswith(cmd.title + "  :")]
            assert any(command_name(cmd) in e and cmd.tooltip[-30:] in e.replace("\n", " ")
                       for e in mine), cmd.id


async def test_typing_a_colon_name_finds_its_command(frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    wanted = by_alias("max-parallel")
    assert wanted is not None
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await pilot.press(*"max-parallel")
        await palette_searched(pilot, palette, "max-parallel")
        assert _entries(palette)[0].startswith(f"{wanted.title}  :max-parallel")
