"""SVG snapshots of operations at 80x24 (frozen data, frozen clock, fixed operation ids):
the header's running line with the busy marker in the node list, and ``:ops`` with a
running drain (its pods and refusal) above a finished cordon.

The operations are registered as the app's apply worker registers them (``begin``,
``progressed``, ``finished``); the drain's plan is the real drain action's. Regenerate on
purpose with ``--snapshot-update`` and look at the SVGs before committing them.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gputui.actions import operations
from gputui.actions.base import Cancel, Plan, Progress, Result
from gputui.actions.registry import action
from gputui.actions.runner import DryRun
from tests.ui.conftest import FrozenApp
from tests.ui.helpers import server_plan, settle_for_snapshot


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Operation ids in order (the real ones carry random bits)."""
    count = itertools.count(1)
    monkeypatch.setattr(operations, "new_id",
                        lambda now: f"0196a3c2-5e10-7000-8000-{next(count):012d}")


def _register(app: Any) -> str:
    """A finished cordon, then a drain refused by a budget, running; the drain's node."""
    node = next(name for name, view in sorted(app.snapshot.nodes.items()) if view.gpu_pods)
    other = next(name for name in sorted(app.snapshot.nodes) if name != node)
    cordon = app.operations.begin(Plan("cordon", f"Cordon {other}", (other,)), DryRun(),
                                  Cancel(), action("cordon"))
    app.operations.finished(cordon.id, Result(True, f"cordoned {other}"))
    plan = server_plan(app, node, refuse=False)
    drain = app.operations.begin(plan, DryRun(), Cancel(), action("drain"))
    pod = app.snapshot.nodes[node].gpu_pods[0]
    budget = f"{pod.labels.get('app', 'trainer')}-pdb"
    app.operations.progressed(drain.id, Progress(
        f"draining {node}: 1 pod left", 1, 2,
        (f"{pod.namespace}/{pod.name}: refused by PodDisruptionBudget {budget} (4 tries)",),
        glance=f"1/2 evicted, 1 refused by budget {budget}, try 4"))
    return node


def test_header_running_line_and_busy_marker(snap_compare: Any, frozen_app: FrozenApp,
                                             fixed_ids: None) -> None:
    app = frozen_app("xid-storm")

    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        _register(app)
        await settle_for_snapshot(pilot)
        app.clear_notifications()  # the cordon's "Done": a toast over what is compared
        await settle_for_snapshot(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_ops_view(snap_compare: Any, frozen_app: FrozenApp, fixed_ids: None) -> None:
    app = frozen_app("xid-storm")

    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        _register(app)
        await pilot.press("colon", *"ops", "enter")
        await settle_for_snapshot(pilot)
        app.clear_notifications()
        await settle_for_snapshot(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
