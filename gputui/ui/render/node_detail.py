"""One node's facts, in the order an on-call operator asks for them.

What is it (pool, product, GPUs), can it take work (ready, cordoned, allocatable vs
capacity per resource), what runs the driver (version beside kernel, operator or host),
is anything paused (deploy labels), is it upgrading or repartitioning, what GPU pods run
there, and what gputui found wrong with a hint each.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gputui.domain.model import DriverOwnership, Finding, NodeView
from gputui.domain.timefmt import duration
from gputui.ui.render.joins import join_value
from gputui.ui.render.style import (
    HELD_LOOK,
    PLAIN,
    UNKNOWN_ROLE,
    UNKNOWN_WORD,
    Palette,
    mig_look,
    severity_word,
    upgrade_look,
)


def _facts() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    return table


def _since(now: float, since: float | None) -> str:
    return f" for {duration(now - since)}" if since is not None else ""


def status_text(node: NodeView, palette: Palette = PLAIN) -> Text:
    """``✔ Ready · schedulable`` / ``✖ NotReady · ‖ cordoned``."""
    text = Text()
    text.append("✔ Ready" if node.ready else "✖ NotReady",
                style=palette.role("ok" if node.ready else "crit"))
    text.append(" · ")
    text.append("‖ cordoned" if node.cordoned else "schedulable",
                style=palette.role("warn") if node.cordoned else "")
    return text


def driver_text(node: NodeView, palette: Palette = PLAIN) -> Text:
    """Driver version and kernel side by side, and who owns the driver."""
    text = Text(f"{node.driver_version or 'unknown'}  ·  kernel {node.kernel or 'unknown'}  ·  ")
    if node.driver_ownership is DriverOwnership.OPERATOR:
        owner = f"NVIDIADriver {node.driver_owner_cr}" if node.driver_owner_cr else "ClusterPolicy"
        text.append(f"operator-managed ({owner})")
    elif node.driver_ownership is DriverOwnership.HOST:
        text.append("host-installed (gpu.deploy.driver=false)", style=palette.role("info"))
    else:
        text.append("no deploy labels: not a GPU node to the operator yet",
                    style=palette.role("warn"))
    return text


def resources_text(node: NodeView, palette: Palette = PLAIN) -> Text:
    """``nvidia.com/gpu 0/8`` per resource (allocatable/capacity), short ones flagged."""
    if not node.resources.entries:
        return Text(f"none advertised ({node.gpu_count} GPUs on the node)",
                    style=palette.role("crit") if node.gpu_count else palette.role("muted"))
    text = Text()
    for i, entry in enumerate(node.resources.entries):
        short = entry.allocatable < entry.capacity
        if i:
            text.append("\n")
        text.append(f"{entry.name} {entry.allocatable}/{entry.capacity} allocatable",
                    style=palette.role("crit") if short else "")
        if short:
            text.append(f"  ✖ {entry.capacity - entry.allocatable} missing",
                        style=palette.role("crit"))
    return text


def deploy_text(node: NodeView, palette: Palette = PLAIN) -> Text:
    """``driver=true dcgm-exporter=paused-for-mig-change ...``; paused values stand out."""
    text = Text()
    for i, label in enumerate(node.deploy_labels):
        if i:
            text.append("  ")
        style = palette.role("paused") if label.paused else palette.role("muted")
        text.append(f"{'‖ ' if label.paused else ''}{label.operand}={label.value}", style=style)
    return text or Text("none", style=palette.role("muted"))


def upgrade_text(node: NodeView, now: float, palette: Palette = PLAIN) -> Text:
    """State, how long, and the skip label."""
    text = Text((node.upgrade_state or "not evaluated") + _since(now, node.upgrade_since),
                style=palette.look(upgrade_look(node.upgrade_state)))
    if node.upgrade_skip:
        text.append(f"  {HELD_LOOK.symbol} {HELD_LOOK.word} (gpu-driver-upgrade.skip=true)",
                    style=palette.look(HELD_LOOK))
    return text


def mig_text(node: NodeView, now: float, palette: Palette = PLAIN) -> Text:
    """Config, state and since, strategy; "not MIG-capable" otherwise."""
    if not (node.mig_capable or node.mig_config):
        return Text("not MIG-capable", style=palette.role("muted"))
    text = Text(f"config {node.mig_config or '(not set)'} · ")
    state = node.mig_state or "no state"
    text.append(state + _since(now, node.mig_since),
                style=palette.look(mig_look(node.mig_state)))
    text.append(f" · strategy {node.mig_strategy or 'none'}")
    return text


def sharing_text(node: NodeView) -> Text:
    """Time-slicing / MPS and replicas, and the device-plugin config in use."""
    text = Text(node.sharing_strategy or "none")
    if node.sharing_replicas > 1:
        text.append(f" ×{node.sharing_replicas} replicas per GPU")
    text.append(f" · device-plugin config {node.device_plugin_config or 'default'}")
    return text


def pods_table(node: NodeView, now: float, palette: Palette = PLAIN) -> RenderableType:
    """GPU pods: name, namespace, phase, GPUs, age."""
    if not node.gpu_pods:
        return Text("no GPU pods on this node", style=palette.role("muted"))
    table = Table(box=None, padding=(0, 1), pad_edge=False)
    for heading in ("namespace/pod", "phase", "GPUs", "age"):
        table.add_column(heading, no_wrap=True, justify="right" if heading == "GPUs" else "left")
    for pod in node.gpu_pods:
        age = duration(now - pod.start_time) if pod.start_time is not None else "—"
        phase_style = palette.role("warn") if pod.phase not in ("Running", "Succeeded") else ""
        table.add_row(f"{pod.namespace}/{pod.name}", Text(pod.phase, style=phase_style),
                      str(pod.gpus), age)
    return table


def naming(findings: Sequence[Finding], node: str) -> tuple[Finding, ...]:
    """The cluster-wide findings that list ``node`` in their ``nodes`` (a stalled upgrade
    queue's waiting nodes): said once for the cluster, they concern this node too."""
    return tuple(f for f in findings if f.node is None and node in f.nodes)


def _unread(node: NodeView) -> list[str]:
    """What could not be read for ``node``, in words."""
    said = [f"{', '.join(node.unknown)} cannot be read"] if node.unknown else []
    if node.health_unknown:
        said.append(f"GPU health unknown: metrics cannot be read ({node.health_unknown})")
    return said


def findings_block(node: NodeView, palette: Palette = PLAIN,
                   cluster: Sequence[Finding] = ()) -> RenderableType:
    """The node's findings, worst first, each with its hint, then the cluster-wide ones
    that name it (``cluster``, from :func:`naming`)."""
    if not node.findings and not cluster and (node.unknown or node.health_unknown):
        # nothing found in what was read
        return Text(f"{UNKNOWN_WORD}: no findings in what could be read; "
                    + "; ".join(_unread(node)), style=palette.role(UNKNOWN_ROLE))
    if not node.findings and not cluster:
        return Text("✔ no findings", style=palette.role("ok"))
    lines: list[RenderableType] = []
    for finding in (*node.findings, *cluster):
        line = Text(f"{severity_word(finding.severity)} ", style=palette.severity(finding.severity))
        line.append(f"{finding.code}{'' if finding.node else ' (cluster)'}: ", style="bold")
        line.append(finding.message, style="")
        lines.append(line)
        if finding.hint:
            lines.append(Padding(Text(f"hint: {finding.hint}", style=palette.role("muted")),
                                 (0, 0, 0, 4)))
    return Group(*lines)


def join_text(node: NodeView, now: float) -> str:
    """``joined 30 d ago`` (how long it took to GPUs is the ``JOIN`` row)."""
    return f"joined {duration(now - node.created)} ago" if node.created is not None else "—"


def render_node_detail(node: NodeView | None, now: float, palette: Palette = PLAIN,
                       cluster: Sequence[Finding] = ()) -> RenderableType:
    """The whole describe pane for ``node``; ``cluster``: the cluster findings naming it."""
    if node is None:
        return Text("no node selected", style=palette.role("muted"))
    facts = _facts()
    facts.add_row("node", Text.assemble((node.name, "bold"), f"  pool {node.pool or '—'}"))
    facts.add_row("GPUs", f"{node.gpu_count} × {node.product or 'unknown product'}")
    facts.add_row("status", status_text(node, palette))
    facts.add_row("driver", driver_text(node, palette))
    facts.add_row("os", node.os_image or "unknown")
    facts.add_row("resources", resources_text(node, palette))
    facts.add_row("deploy", deploy_text(node, palette))
    facts.add_row("upgrade", upgrade_text(node, now, palette))
    facts.add_row("MIG", mig_text(node, now, palette))
    facts.add_row("sharing", sharing_text(node))
    facts.add_row("lifecycle", join_text(node, now))
    facts.add_row("JOIN", join_value(node, now, palette))  # time to GPU (render/joins.py)
    return Group(facts, Text(""), Text(f"GPU pods ({len(node.gpu_pods)})", style="bold"),
                 pods_table(node, now, palette), Text(""),
                 Text(f"Findings ({len(node.findings) + len(cluster)})", style="bold"),
                 findings_block(node, palette, cluster))
