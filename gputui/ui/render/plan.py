"""The plan as the confirmation dialog shows it: title and body, plain renderables.

Kept apart from :mod:`gputui.ui.screens.confirm` (the dialog's states and keys) so a test can
read what a plan says without an app, and the dialog module stays about the dialog.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from gputui.actions.base import Plan
from gputui.ui.selection import targets_label

#: lines of a long list (changes, kubectl) shown before "... and N more"
LIST_LIMIT = 12
#: lines of the per-pod lists (impact, dry run) shown before "... and N more": the body
#: scrolls, and the operator must be able to read what happens to every pod before ``y``
POD_LIST_LIMIT = 500


def section(title: str, lines: Sequence[str], style: str = "",
             limit: int = LIST_LIMIT) -> Text:
    """A bold heading and its lines, the first ``limit`` of them, then how many more."""
    text = Text(title, style="bold")
    shown = list(lines[:limit])
    if len(lines) > limit:
        shown.append(f"... and {len(lines) - limit} more")
    for line in shown:
        text.append("\n  ")
        text.append(line, style=style)
    return text


def dialog_title(plan: Plan, targets: Sequence[str]) -> str:
    """The plan's title, naming the targets when it does not already (``Set MIG config
    all-1g.10gb on 1 node(s) (gke-prod-a100-pool-2b9c-stnm)``)."""
    named = targets or plan.targets
    if not named or all(name in plan.title for name in named):
        return plan.title
    return f"{plan.title} ({targets_label(named)})"


def plan_text(plan: Plan) -> Text:
    """Everything the plan says, as one renderable (a test can call it without an app)."""
    parts = [Text.assemble(("Targets: ", "bold"), ", ".join(plan.targets) or "the cluster")]
    if plan.warnings:  # first: what makes it risky, or stop early, must be read before y
        parts.append(section("Warnings", plan.warnings, "bold", limit=POD_LIST_LIMIT))
    if plan.changes:
        # an eviction's summary names the pod already ("evict ns/name"): one compact line
        parts.append(section("Change", [c.summary if c.verb == "create" else
                                         f"{c.kind} {c.name}: {c.summary}"
                                         for c in plan.changes]))
        parts.append(section("kubectl", list(dict.fromkeys(plan.kubectl))))
    if plan.steps:
        parts.append(section("Steps", plan.steps))
    if plan.impact:
        parts.append(section("Impact", plan.impact, limit=POD_LIST_LIMIT))
    return Text("\n").join(parts)
