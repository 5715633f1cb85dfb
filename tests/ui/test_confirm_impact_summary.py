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


def test_a_quoted_command_name_is_not_cut_at_its_colon() -> None:
    """The set-version plan's offer of the canary read "use 'upgrade" at 80x24: the line
    was cut at the ": " inside the quoted name (the offer itself was below the fold)."""
    impact = ("autoUpgrade is on: every one of the 4 nodes will roll, up to 1 at a time",
              "to try one node first, use 'upgrade: canary' (holds every other node)")
    assert impact_summary(impact).startswith(
        "autoUpgrade is on · to try one node first, use 'upgrade: canary'")
    assert impact_summary(("gke-a: 'x: y' drained: 3 pods",)) == "'x: y' drained"


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


def test_a_policy_edit_names_its_object_once() -> None:
    """The set-version and canary dialogs read "ClusterPolicy cluster-policy: ClusterPolicy
    cluster-policy: driver version ..." (the edit's summary names the policy already)."""
    from gputui.actions.base import Change
    from gputui.ui.render.plan import change_line

    edit = Change("patch", "ClusterPolicy", "cluster-policy", {}, "kubectl patch ...",
                  "ClusterPolicy cluster-policy: driver version 570.172.08 -> 580.82.07")
    assert change_line(edit) == edit.summary
    cordon = Change("patch", "Node", "gpu-1", {}, "kubectl cordon gpu-1",
                    "spec.unschedulable: false -> true")
    assert change_line(cordon) == "Node gpu-1: spec.unschedulable: false -> true"
    evict = Change("create", "Pod", "train-0", {}, "kubectl drain ...", "evict ml/train-0")
    assert change_line(evict) == "evict ml/train-0"
