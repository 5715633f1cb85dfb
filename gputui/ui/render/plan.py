"""The plan as the confirmation dialog shows it: title and body, plain renderables.

Kept apart from :mod:`gputui.ui.screens.confirm` (the dialog's states and keys) so a test can
read what a plan says without an app, and the dialog module stays about the dialog.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from gputui.actions.base import Plan
from gputui.actions.runner import DryRun
from gputui.ui.render.plan_summary import impact_summary

#: names a title lists before it says "and N more"
LABEL_NAMES = 3
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


def targets_label(nodes: Sequence[str]) -> str:
    """The targets as a prompt's or the dialog's title names them: ``gpu-1``, ``gpu-1,
    gpu-2``, or ``5 nodes: gpu-1, gpu-2, gpu-3 and 2 more``; ``the cluster`` for none."""
    if not nodes:
        return "the cluster"
    if len(nodes) <= LABEL_NAMES:
        return ", ".join(nodes)
    shown = ", ".join(nodes[:LABEL_NAMES])
    return f"{len(nodes)} nodes: {shown} and {len(nodes) - LABEL_NAMES} more"


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
    if summary := impact_summary(plan.impact):  # above the fold at 80x24 (render/plan_summary)
        parts.append(Text.assemble(("Impact: ", "bold"), summary))
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


def status_text(plan: Plan, dry_run: DryRun | None, options_hint: str = "") -> Text:
    """The dialog's line above its buttons: why not, waiting, passed, refused, or what
    the server was not asked (then ``y`` does nothing); ``options_hint`` says ``o``."""
    if plan.blocked:
        return Text.assemble(("Not possible: ", "bold"), plan.blocked)
    if dry_run is None:
        return Text("Dry run: asking the server (dryRun=All)...", style="italic")
    dry = dry_run
    if dry.nothing:
        return Text.assemble(("Nothing to change: ", "bold"), "the plan sends no write; "
                             "y does nothing" + options_hint)
    if dry.refusal:
        return Text.assemble(("Dry run: REFUSED, nothing can be applied: ", "bold"),
                             dry.refusal)
    if not dry.ok:
        return Text.assemble(("Dry run: INCOMPLETE, nothing can be applied: ", "bold"),
                             dry.summary())
    if plan.caveats:  # what the action says it will stop short of (a drain's refused pods)
        return Text.assemble(("Dry run: passed; ", "bold"), ("; ".join(plan.caveats), "bold"),
                             options_hint + "; y applies")
    if dry.held:
        held = len(dry.held)
        refused = f"{held} eviction{'s' if held > 1 else ''} refused now by a budget"
        return Text.assemble(("Dry run: passed; ", "bold"), (refused, "bold"),
                             " (retried); y applies")
    return Text.assemble(("Dry run: passed", "bold"),
                         f" ({dry.checked} of {dry.total} write"
                         f"{'s' if dry.total != 1 else ''} checked); y applies")
