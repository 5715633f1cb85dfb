"""``:mig`` at scale: a window of cards around the cursor, not one widget per MIG node.

At 5,000 GPU nodes (4,000 with MIG) the view mounted 4,000 cards and answered no key for
35 s (``python benchmarks/bench_views.py`` times each view's switch at scale); now at most
``WINDOW`` cards exist, the cursor moves through every node and a line says which part is
shown.
"""

from __future__ import annotations

import io
from dataclasses import replace
from types import MappingProxyType

from rich.console import Console
from textual.widgets import Static

from gputui.domain.model import ClusterSnapshot
from gputui.ui.screens.mig import MigScreen
from gputui.ui.widgets.mig_layout import WINDOW, MigCard, MigLayout, window_start
from tests.ui.helpers import until
from tests.ui.panes.data import mig_snapshot
from tests.ui.panes.host import HostApp


def test_the_window_moves_as_little_as_the_cursor_needs() -> None:
    assert window_start(3, cursor=2, start=0, size=40) == 0  # everything fits
    assert window_start(100, cursor=39, start=0, size=40) == 0
    assert window_start(100, cursor=40, start=0, size=40) == 1  # one past the bottom
    assert window_start(100, cursor=99, start=1, size=40) == 60  # End-like jumps
    assert window_start(100, cursor=59, start=60, size=40) == 59  # one above the top
    assert window_start(100, cursor=10, start=90, size=40) == 10  # a jump far up
    assert window_start(50, cursor=5, start=30, size=40) == 5  # nodes went away


def _many(count: int) -> ClusterSnapshot:
    """``count`` MIG nodes made from the three of the pane fixtures."""
    base = mig_snapshot()
    views = list(base.mig.nodes.values())
    nodes = list(base.nodes.values())
    mig, all_nodes = {}, {}
    for i in range(count):
        name = f"a100-node-{i:04d}"
        mig[name] = replace(views[i % 3], node=name)
        all_nodes[name] = replace(nodes[i % 3], name=name)
    return replace(base, nodes=MappingProxyType(all_nodes),
                   mig=replace(base.mig, nodes=MappingProxyType(mig)))


def _text(card: MigCard) -> str:
    """What a card shows, as plain text."""
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(card.content)
    return console.export_text()


async def test_a_thousand_mig_nodes_draw_one_window_and_the_cursor_reaches_every_one() -> None:
    snapshot = _many(1000)
    app = HostApp(snapshot, screen=MigScreen())
    async with app.run_test(size=(100, 30)) as pilot:
        layout = app.screen.query_one(MigLayout)
        await until(pilot, lambda: len(app.screen.query(MigCard)) == WINDOW)
        rest = app.screen.query_one(".mig-window", Static)
        assert rest.display and "1-40 of 1,000" in str(rest.render())
        assert layout.cursor == "a100-node-0000"
        for _ in range(WINDOW + 4):
            await pilot.press("down")
        await until(pilot, lambda: layout.cursor == f"a100-node-{WINDOW + 4:04d}")
        assert len(app.screen.query(MigCard)) == WINDOW  # the window moved; no card added
        assert "6-45 of 1,000" in str(rest.render())
        cursor_cards = [c for c in app.screen.query(MigCard) if c.has_class("-cursor")]
        assert len(cursor_cards) == 1 and "a100-node-0044" in _text(cursor_cards[0])
        assert app.screen.selected_nodes().nodes == ("a100-node-0044",)  # what `m` acts on
        app.screen.show_node("a100-node-0900")  # a jump from a finding
        await until(pilot, lambda: "862-901 of 1,000" in str(rest.render()))
        assert layout.cursor == "a100-node-0900"
        assert "a100-node-0900" in _text(list(app.screen.query(MigCard))[-1])


async def test_few_nodes_show_every_card_and_no_window_line() -> None:
    app = HostApp(mig_snapshot(), screen=MigScreen())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.screen.query(MigCard)) == 3)
        assert not app.screen.query_one(".mig-window", Static).display
