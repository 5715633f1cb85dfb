"""The confirmation dialog says what an action will stop short of from ``Plan.caveats``, which
the action fills: the dialog reads no action's own record (a drain's refused pods)."""

from __future__ import annotations

import ast
from pathlib import Path

from gputui.actions.base import Change, Plan
from gputui.actions.drain_plan import describe
from gputui.actions.drain_rules import Sorting
from gputui.actions.registry import ACTIONS
from gputui.actions.runner import DryRun
from gputui.ui.render.plan import status_text

UI = Path(__file__).resolve().parents[2] / "gputui" / "ui"
PASSED = DryRun(checked=1, total=1)
CORDON = Change("patch", "Node", "gpu-1", {"spec": {"unschedulable": True}},
                kubectl="kubectl cordon gpu-1", summary="cordon")


def test_a_caveat_is_said_beside_a_passed_dry_run() -> None:
    plan = Plan("anything", "Do it", ("gpu-1",), (CORDON,), caveats=("it stops half way",))
    line = str(status_text(plan, PASSED, " (o: other options)"))
    assert line == "Dry run: passed; it stops half way (o: other options); y applies"
    assert str(status_text(Plan("anything", "Do it", ("gpu-1",), (CORDON,)), PASSED)) == (
        "Dry run: passed (1 of 1 write checked); y applies")


def test_the_drain_fills_its_caveat_when_its_options_refuse_a_pod() -> None:
    refusing = Sorting()
    refusing.emptydir.append("ml/cache-0")
    refusing.unmanaged.append("ml/loose")
    plan = describe(Plan("drain", "Drain gpu-1", ("gpu-1",), (CORDON,)),
                    {"gpu-1": refusing, "gpu-2": Sorting()})
    assert plan.caveats == ("the drain will cordon and then stop (2 pods refused)",)
    assert describe(Plan("drain", "Drain gpu-2", ("gpu-2",)), {"gpu-2": Sorting()}).caveats == ()


def test_the_dialog_modules_import_no_action() -> None:
    """Neither a registered action's module nor one of its family's helpers (``drain`` ->
    ``drain_plan``, ``mig`` -> ``mig_steps``): only the actions' shared types."""
    families = {type(action).__module__.rsplit(".", 1)[1].split("_")[0] for action in ACTIONS}
    for path in (UI / "render" / "plan.py", UI / "render" / "plan_summary.py",
                 UI / "screens" / "confirm.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and n.module}
        known = {m for m in imported if m.startswith("gputui.actions.")
                 and m.split(".")[2].split("_")[0] in families}
        assert known == set(), path
