"""SVG snapshots of the confirmation dialog at 80x24 and 160x48 (frozen data, frozen clock).

The plan is made by the real drain action from a recorded snapshot; the dry run's answer is
posted as the app's worker would post it. Regenerate on purpose with ``--snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

from typing import Any

import pytest

from gputui.actions.registry import action
from gputui.actions.runner import DryRun
from gputui.ui.screens.confirm import ConfirmScreen, DryRunFinished
from tests.ui.conftest import FrozenApp
from tests.ui.helpers import server_plan, settle_for_snapshot

SIZES = [(80, 24), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_drain_dialog(snap_compare: Any, frozen_app: FrozenApp, size: tuple[int, int]) -> None:
    app = frozen_app("xid-storm")

    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        node = next(name for name, view in app.snapshot.nodes.items() if view.gpu_pods)
        pod = app.snapshot.nodes[node].gpu_pods[0]
        plan = server_plan(app, node, refuse=False)
        dialog = ConfirmScreen(plan)
        await app.push_screen(dialog)
        await settle_for_snapshot(pilot)
        refused = (f"evict {pod.namespace}/{pod.name}: refused now by PodDisruptionBudget "
                   f"{pod.labels.get('app', 'trainer')}-pdb; the drain retries it until its "
                   "timeout")
        lines = [f"{node}: spec.unschedulable: false -> true: accepted", refused,
                 *(f"evict {c.namespace}/{c.name}: allowed now" for c in plan.changes[2:])]
        dialog.post_message(DryRunFinished(DryRun(
            tuple(lines), held=(refused,), checked=len(plan.changes),
            total=len(plan.changes))))
        await settle_for_snapshot(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_drain_dialog_with_a_refused_pod(snap_compare: Any, frozen_app: FrozenApp,
                                         size: tuple[int, int]) -> None:
    """The emptyDir pod is refused with kubectl's default options: the dialog says, before
    ``y``, that the drain will cordon and stop, which pod, and the option that allows it."""
    app = frozen_app("xid-storm")

    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        node = next(name for name, view in app.snapshot.nodes.items() if view.gpu_pods)
        plan = server_plan(app, node, refuse=True)
        dialog = ConfirmScreen(plan, action("drain"))
        await app.push_screen(dialog)
        await settle_for_snapshot(pilot)
        dialog.post_message(DryRunFinished(DryRun(
            (f"{node}: spec.unschedulable: false -> true: accepted",), checked=1, total=1)))
        await settle_for_snapshot(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
