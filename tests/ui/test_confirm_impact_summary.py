"""The confirmation dialog says the impact in one line above the fold at 80x24 (issue 29
item 7): before, a drain's Impact came after its changes, kubectl lines and steps, and at
80x24 it needed scrolling to read which GPU pods the drain evicts."""

from __future__ import annotations

from typing import Any

from gputui.ui.render.plan_summary import impact_summary
from gputui.ui.screens.confirm import ConfirmScreen
from tests.ui.conftest import FrozenApp
from tests.ui.helpers import server_plan, settle_for_snapshot


def test_the_summary_names_each_top_level_line_and_fits_the_dialog() -> None:
    impact = ("1 node made unavailable: 1 of 4 unavailable, maxUnavailable 1",
              "1 GPU pod running there:", "  ml/train-0 on gpu-3 (8 GPUs, app trainer)",
              "gpu-3: 3 pods (listed from the server): 2 evicted, 1 skipped, 0 refused",
              "  evict ml/train-0")
    assert impact_summary(impact) == ("1 node made unavailable · 1 GPU pod running there · 3 "
                                      "pods (liste…")
    assert impact_summary(impact, width=200).endswith("· 3 pods (listed from the server)")
    assert impact_summary(("no GPU pods evicted",)) == "no GPU pods evicted"
    assert impact_summary(()) == ""
    assert len(impact_summary(("x" * 300, "y"))) <= 66


async def test_the_drain_dialog_shows_its_impact_without_scrolling(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("xid-storm")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_for_snapshot(pilot)
        node = next(name for name, view in app.snapshot.nodes.items() if view.gpu_pods)
        plan = server_plan(app, node, refuse=False)
        app.push_screen(ConfirmScreen(plan))
        await settle_for_snapshot(pilot)
        screen: Any = app.screen
        shown = "\n".join(strip.text for strip in screen._compositor.render_strips())
        summary = impact_summary(plan.impact)
        assert summary and f"Impact: {summary[:40]}" in shown, shown
