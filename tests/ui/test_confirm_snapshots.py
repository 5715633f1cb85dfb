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

SIZES = [(80, 24), (160, 48)]


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.pause(0.15)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_drain_dialog(snap_compare: Any, frozen_app: FrozenApp, size: tuple[int, int]) -> None:
    app = frozen_app("xid-storm")

    async def run_before(pilot: Any) -> None:
        await _settle(pilot)
        node = next(name for name, view in app.snapshot.nodes.items() if view.gpu_pods)
        pod = app.snapshot.nodes[node].gpu_pods[0]
        plan = action("drain").plan(app.snapshot, [node], {"timeout": 300})
        dialog = ConfirmScreen(plan)
        await app.push_screen(dialog)
        await _settle(pilot)
        refused = (f"evict {pod.namespace}/{pod.name}: refused now by PodDisruptionBudget "
                   f"{pod.labels.get('app', 'trainer')}-pdb; the drain retries it until its "
                   "timeout")
        dialog.post_message(DryRunFinished(DryRun(
            (f"{node}: spec.unschedulable: false -> true: accepted", refused),
            held=(refused,))))
        await _settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
