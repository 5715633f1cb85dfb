"""Help (``?``) lists the keys of the view it was opened from first, so that at 80x24 an
operator on the node list sees cordon, uncordon and drain without scrolling (Pilot, frozen
data; what is "seen" is the app's own screenshot of the terminal, nothing scrolled)."""

from __future__ import annotations

import html
import re

from gputui.ui.app import GpuTuiApp
from gputui.ui.commands import COMMANDS
from gputui.ui.key_table import key_table
from gputui.ui.screens.help import HelpScreen
from tests.ui.conftest import FrozenApp, settle

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')


def screen_lines(app: GpuTuiApp) -> list[str]:
    """The terminal's lines as shown now: the screenshot's text runs, joined per row."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, run in _TEXT.findall(app.export_screenshot(simplify=True)):
        rows.setdefault(float(y), []).append((float(x), html.unescape(run)))
    lines = []
    for _, parts in sorted(rows.items()):
        line = ""
        for x, run in sorted(parts):  # Rich's SVG cells are 0.61 x 20 px wide
            line = line.ljust(round(x / 12.2)) + run
        lines.append(line.replace("\xa0", " "))
    return lines


def _row(lines: list[str], keys: str, title: str) -> bool:
    """Some line shows ``keys`` then ``title`` in the KEYS and COMMAND columns."""
    return any(re.search(rf"│ {re.escape(keys)} +{re.escape(title)} ", line) for line in lines)


async def test_help_on_the_node_list_at_80x24_shows_cordon_uncordon_drain(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#help-body").scroll_y == 0
        lines = screen_lines(app)
        assert len(lines) == 24
        for keys, title in (("c", "Cordon"), ("u", "Uncordon"), ("r", "Drain"),
                            (": ctrl+p", "Everything else")):
            assert _row(lines, keys, title), "\n".join(lines)
        heading = next(i for i, line in enumerate(lines) if "│ Node list " in line)
        assert heading < next(i for i, line in enumerate(lines) if "Cordon " in line)


async def test_help_from_another_view_puts_that_views_keys_first(frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("2", "question_mark")
        await settle(pilot)
        lines = screen_lines(app)
        assert any("│ Upgrade lanes " in line for line in lines), "\n".join(lines)
        assert not any("│ Node list " in line for line in lines)


def test_the_view_first_table_still_lists_every_command_once() -> None:
    for view in ("nodes", "upgrades", "mig", "findings", "no-such-view", None):
        rows = key_table({}, None, view)
        commands = [(title, tooltip) for _, _, title, tooltip in rows
                    if title != "Everything else"]
        assert sorted(commands) == sorted((c.title, c.tooltip) for c in COMMANDS), view
    nodes = key_table({"cordon": "C"}, None, "nodes")
    assert nodes[0] == ("Node list", "C", "Cordon",
                        "Mark the node(s) unschedulable; running pods stay (kubectl cordon).")
    assert [r[2] for r in nodes[:4]] == ["Cordon", "Uncordon", "Drain", "Everything else"]
    assert key_table() == key_table({}, None, None)  # README's table: no view, as before
