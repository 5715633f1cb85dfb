"""The handoff summary: one Markdown document of what the next person on call must know.

At the end of a shift, or when escalating, an operator writes the same summary by hand:
which cluster, the ClusterPolicy, what is wrong and where, how the driver upgrade stands,
MIG changes that did not succeed, what was done about it, and what could not be seen.
``:summary`` (TUI) and ``gputui check --format markdown`` build it from one
:class:`SummaryInput`, so both say the same thing.

Built from sections: each is a function of :class:`SummaryInput` returning its lines (empty
for "nothing to say"), and :data:`SECTIONS` orders them. A new section (the incident
timeline, say) is one more function in that tuple and, when it needs data the snapshot
does not carry, one more field of :class:`SummaryInput`.

Every string that came from the cluster or the audit log goes through
:func:`gputui.domain.markdown.md_text` (sanitised, then escaped), never straight into the
document. What could not be read is said to be unknown, never left out (a summary that
skips it would read as healthy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from gputui.domain import labels as L
from gputui.domain.cluster_id import cluster_id
from gputui.domain.checkjson import gpu_health_unknown
from gputui.domain.markdown import md_list, md_text
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.operations import AuditedOperation
from gputui.domain.readgaps import gap_phrase, health_unknowable
from gputui.domain.timeline_event import TimelineEvent
from gputui.domain.upgrade_state import UpgradeState, mid_upgrade
from gputui.domain.views import UpgradeView


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """What a summary is built from.

    Attributes:
        now: the time the summary speaks for (epoch seconds; the app's or check's clock).
        operations: actions from the audit log, oldest first.
        operations_scope: our words for where they come from ("this session", "the audit
            log FILE, last 24 h"); the file name is escaped like cluster text.
        operations_note: why operations may be missing (log unreadable), or "".
        timeline: the events gputui saw while it watched, oldest first; None when nothing
            watched (``check`` reads once and sees no change).
        timeline_since: when watching began (epoch seconds), None if not yet.
    """

    snapshot: ClusterSnapshot
    now: float
    operations: tuple[AuditedOperation, ...] = ()
    operations_scope: str = "this session"
    operations_note: str = ""
    timeline: tuple[TimelineEvent, ...] | None = None
    timeline_since: float | None = None


Section = Callable[[SummaryInput], list[str]]

_SEVERITY_TITLES = ((Severity.CRITICAL, "Critical"), (Severity.WARNING, "Warning"),
                    (Severity.INFO, "Info"))


def iso_utc(seconds: float) -> str:
    """``2026-12-01T13:53:21Z``: UTC, ISO 8601, to the second."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cluster_text(snapshot: ClusterSnapshot) -> str:
    """The server URL without userinfo, with the ``kube-system`` UID that names the cluster
    (what the operations below were matched by)."""
    return cluster_id(snapshot.server, snapshot.cluster_uid).describe() if snapshot.server \
        else ""


def header_section(summary: SummaryInput) -> list[str]:
    """Title, cluster, context and time."""
    snapshot = summary.snapshot
    lines = [f"# GPU cluster handoff: {md_text(snapshot.context) or 'unknown context'}", "",
             f"- Context: {md_text(snapshot.context) or 'unknown'}",
             f"- Cluster: {md_text(_cluster_text(snapshot)) or 'unknown'}",
             f"- Time: {iso_utc(summary.now)} (UTC)"]
    if "nodes" in snapshot.loading or "nodes" in snapshot.unreadable:
        lines.append("- GPU nodes: unknown")
    else:
        lines.append(f"- GPU nodes: {len(snapshot.nodes)}")
    return lines


def policy_section(summary: SummaryInput) -> list[str]:
    """The ClusterPolicy's state, the operands that are not ready, a failing condition."""
    snapshot = summary.snapshot
    policy = snapshot.cluster_policy
    state = policy.state
    if "clusterpolicies" in snapshot.loading:  # not read yet: "missing" would be a guess
        state = "unknown"
    lines = ["## ClusterPolicy", ""]
    name = md_text(policy.name) or "ClusterPolicy"
    lines.append(f"- {name}: **{md_text(state)}**")
    if policy.not_ready_states:
        lines.append(f"- Not ready: {md_list(list(policy.not_ready_states))}")
    for condition in policy.conditions:
        if condition.type == "Ready" and condition.status != "True" and condition.message:
            lines.append(f"- Ready condition: {md_text(condition.reason)}: "
                         f"{md_text(condition.message)}")
    return lines


def _finding_lines(finding: Finding) -> list[str]:
    where = md_text(finding.node) if finding.node else "the cluster"
    lines = [f"- **{md_text(finding.code)}** on {where}: {md_text(finding.message)}"]
    if finding.nodes:
        lines.append(f"  - Nodes: {md_list(list(finding.nodes))}")
    if finding.hint:
        lines.append(f"  - Hint: {md_text(finding.hint)}")
    return lines


def findings_section(summary: SummaryInput) -> list[str]:
    """Findings grouped critical, warning, info; each with its node(s) and hint."""
    snapshot = summary.snapshot
    lines = ["## Findings", ""]
    if not snapshot.findings:
        if health_unknowable(snapshot.unreadable) or snapshot.loading:
            lines.append("No findings in what could be read: health **unknown** "
                         "(see \"Could not be read\").")
        elif gpu_health_unknown(snapshot):  # metrics read for no GPU node
            lines.append("No findings in what could be read: GPU health **unknown** "
                         "(see \"Could not be read\").")
        else:
            lines.append("No findings.")
        return lines
    counts = [f"{sum(f.severity is sev for f in snapshot.findings)} {title.lower()}"
              for sev, title in _SEVERITY_TITLES]
    lines.append(", ".join(counts))
    for severity, title in _SEVERITY_TITLES:
        found = [f for f in snapshot.findings if f.severity is severity]
        if not found:
            continue
        lines += ["", f"### {title} ({len(found)})", ""]
        for finding in found:
            lines += _finding_lines(finding)
    return lines


def state_counts(upgrade: UpgradeView) -> str:
    """``1 done, 0 in progress, 5 pending, 1 failed``: parts that add up to the total.

    ``in_progress`` counts a failed node too (it holds a slot, as the upgrade controller
    counts it), so the phrase takes the failed ones out of "in progress"; managed nodes
    without a state label yet are named when there are any."""
    moving = max(upgrade.in_progress - upgrade.failed, 0)
    parts = [f"{upgrade.done} done", f"{moving} in progress", f"{upgrade.pending} pending",
             f"{upgrade.failed} failed"]
    unlabelled = upgrade.total - upgrade.done - moving - upgrade.pending - upgrade.failed
    if unlabelled > 0:
        parts.append(f"{unlabelled} without a state")
    return ", ".join(parts)


def upgrade_section(summary: SummaryInput) -> list[str]:
    """Counts by upgrade state, failed nodes, nodes waiting and why, a cluster-wide block."""
    upgrade = summary.snapshot.upgrade
    lines = ["## Driver upgrade", ""]
    if upgrade.policy is None and not upgrade.lanes:
        return lines + ["No driver upgrade is managed (no upgrade policy)."]
    lines.append(f"- Auto upgrade: {'on' if upgrade.enabled else 'off'}; "
                 f"{upgrade.total} nodes: {state_counts(upgrade)}")
    counts = [f"{md_text(state or 'no state label')} {len(nodes)}"
              for state, nodes in upgrade.lanes.items()]
    if counts:
        lines.append(f"- By state: {', '.join(counts)}")
    for node in upgrade.lanes.get(UpgradeState.FAILED, ()):
        status = upgrade.nodes.get(node)
        why = f": {md_text(status.wait_reason)}" if status and status.wait_reason else ""
        lines.append(f"- Failed: {md_text(node)}{why}")
    for status in upgrade.nodes.values():
        if status.wait_reason and mid_upgrade(status.state):
            lines.append(f"- Waiting: {md_text(status.node)} in {md_text(status.state)}: "
                         f"{md_text(status.wait_reason)}")
    if upgrade.blocked:
        lines.append(f"- Blocked: {md_text(upgrade.blocked)}")
    return lines


def mig_section(summary: SummaryInput) -> list[str]:
    """MIG nodes whose state is anything but ``success``; nothing when all succeeded."""
    lines = []
    for node in summary.snapshot.mig.nodes.values():
        if node.state and node.state != L.MIG_STATE_SUCCESS:
            desired = f", config {md_text(node.desired)}" if node.desired else ""
            since = f" since {iso_utc(node.since)}" if node.since else ""
            lines.append(f"- {md_text(node.node)}: **{md_text(node.state)}**{desired}{since}")
    return ["## MIG", "", *lines] if lines else []


def _operation_line(op: AuditedOperation) -> str:
    user = f" by {md_text(op.user)}" if op.user else ""
    return (f"- {md_text(op.time) or 'unknown time'} **{md_text(op.action)}** on "
            f"{md_list(list(op.targets))}{user}: {md_text(op.outcome)}")


#: the most "now" lines under one operation (a cordon of 500 nodes is not 500 lines)
AFTER_LINES = 5


def _wrong_by_node(snapshot: ClusterSnapshot) -> dict[str, list[Finding]]:
    by_node: dict[str, list[Finding]] = {}
    for finding in snapshot.findings:
        if finding.node and finding.severity.rank >= Severity.WARNING.rank:
            by_node.setdefault(finding.node, []).append(finding)
    return by_node


def _after_lines(nodes: Sequence[str], by_node: dict[str, list[Finding]]) -> list[str]:
    """What is wrong now on the nodes an operation was the last action on, said as coming
    after it: "done" above and "failed" below read in the order they happened, not as a
    contradiction (a MIG change the manager failed after the action had set its label)."""
    found = [f for node in nodes for f in by_node.get(node, ())]
    lines = [f"  - Now, after it: **{md_text(f.code)}** on {md_text(f.node or '')}: "
             f"{md_text(f.message)}" for f in found[:AFTER_LINES]]
    if len(found) > AFTER_LINES:
        lines.append(f"  - Now, after it: {len(found) - AFTER_LINES} more findings on its "
                     "nodes (see Findings)")
    return lines


def operations_section(summary: SummaryInput) -> list[str]:
    """Actions taken (from the audit log) with their results, oldest first; under the last
    action on a node, what is wrong on that node now (after it)."""
    lines = [f"## Operations ({md_text(summary.operations_scope)})", ""]
    if summary.operations_note:
        lines.append(f"- Note: {md_text(summary.operations_note)}")
    if not summary.operations:
        lines.append("No operations recorded.")
    last = {node: index for index, op in enumerate(summary.operations) for node in op.targets}
    wrong = _wrong_by_node(summary.snapshot) if summary.operations else {}
    for index, op in enumerate(summary.operations):
        lines.append(_operation_line(op))
        lines += _after_lines([n for n in op.targets if last.get(n) == index], wrong)
    return lines


#: how far back the summary's timeline goes (seconds), and the most events it lists
TIMELINE_WINDOW = 3600.0
TIMELINE_LINES = 100


def timeline_section(summary: SummaryInput) -> list[str]:
    """The last hour of the timeline for the nodes with warning or critical findings, and
    every action taken, oldest first (the order a postmortem reads)."""
    lines = ["## Timeline (last hour)", ""]
    if summary.timeline is None:
        return [*lines, ("No live timeline: a one-shot read sees no changes (:summary in "
                         "the TUI has one).")]
    affected = {f.node for f in summary.snapshot.findings
                if f.node and f.severity.rank >= Severity.WARNING.rank}
    start = summary.now - TIMELINE_WINDOW
    if summary.timeline_since is not None:
        start = max(start, summary.timeline_since)
    chosen = [e for e in summary.timeline if e.at >= summary.now - TIMELINE_WINDOW
              and (e.kind == "action" or (e.node is not None and e.node in affected))]
    names = sorted(affected)
    nodes = (md_list(names) if len(names) <= 10
             else f"{md_list(names[:10])} and {len(names) - 10} more")
    if not chosen:
        return lines + [f"No events for {nodes}, and no action, since {iso_utc(start)}."
                        if affected else "No node has a warning or critical finding, and "
                        f"no action was taken since {iso_utc(start)}."]
    lines += [f"Events of {nodes} and every action, since {iso_utc(start)}:" if affected
              else f"Actions since {iso_utc(start)} (no node has a warning or critical "
              "finding):", ""]
    for event in chosen[-TIMELINE_LINES:]:
        node = md_text(event.node) if event.node else "cluster"
        who = f" (by {md_text(event.who)})" if event.who else ""
        lines.append(f"- {iso_utc(event.at)} {node}: {md_text(event.text)}{who}")
    if len(chosen) > TIMELINE_LINES:
        lines.append(f"- ({len(chosen) - TIMELINE_LINES} older events left out)")
    return lines


def unreadable_section(summary: SummaryInput) -> list[str]:
    """Every resource that could not be read (or not yet): what it hides is unknown."""
    snapshot = summary.snapshot
    lines = [f"- {md_text(gap_phrase(gap))}" for gap in snapshot.gaps]
    lines += [f"- still loading {md_text(resource)}: what it feeds is unknown"
              for resource in sorted(snapshot.loading)]
    if not lines:
        return ["## Could not be read", "", "Nothing: every resource gputui reads was read."]
    return ["## Could not be read", "", *lines]


#: the summary's sections, in order (see the module docstring to add one)
SECTIONS: tuple[Section, ...] = (header_section, policy_section, findings_section,
                                 upgrade_section, mig_section, operations_section,
                                 timeline_section, unreadable_section)


def build_summary(summary: SummaryInput, sections: Sequence[Section] = SECTIONS) -> str:
    """The Markdown document: each non-empty section, a blank line between them."""
    blocks = [lines for section in sections if (lines := section(summary))]
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"
