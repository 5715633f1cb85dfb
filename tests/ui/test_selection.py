"""The pure half of "every action acts on the view's selection": how a selection is made and
how titles name targets (no app needed)."""

from __future__ import annotations

from gputui.actions.base import Plan
from gputui.ui.render.plan import dialog_title, targets_label
from gputui.ui.selection import Selection


def test_a_selection_keeps_names_and_says_why_when_empty() -> None:
    assert Selection.of(("gpu-1", None, ""), "why").nodes == ("gpu-1",)
    empty = Selection.of((None,), "the cursor is on a lane heading, not a node")
    assert empty.nodes == () and empty.why_none.startswith("the cursor is on a lane")


def test_titles_name_the_targets() -> None:
    assert targets_label(()) == "the cluster"
    assert targets_label(("a", "b")) == "a, b"
    assert targets_label(("a", "b", "c", "d", "e")) == "5 nodes: a, b, c and 2 more"
    mig = Plan("mig-config-safe", "Safe MIG change to all-1g.10gb on 1 node(s)", ("gpu-7",))
    assert dialog_title(mig, ("gpu-7",)) == (
        "Safe MIG change to all-1g.10gb on 1 node(s) (gpu-7)")
    cordon = Plan("cordon", "Cordon gpu-7", ("gpu-7",))
    assert dialog_title(cordon, ("gpu-7",)) == "Cordon gpu-7"  # named already
    # a plan that left a target out (nothing to do there) still names what was asked for
    assert dialog_title(Plan("cordon", "Cordon gpu-1", ("gpu-1",)), ("gpu-1", "gpu-2")) == (
        "Cordon gpu-1 (gpu-1, gpu-2)")
