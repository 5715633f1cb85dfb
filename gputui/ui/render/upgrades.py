"""The driver upgrade as lanes: policy line, slot line, state flow and nodes grouped by state.

"Why is nothing moving?" is answered by three facts read together: the policy (how many
may move at once), the slots (how many are taken, failed nodes included), and each node's
own reason. Lanes run in state-machine order so the eye reads the upgrade left to right,
top to bottom; a node that moves appears one lane further down on the next snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gputui.domain.model import ClusterSnapshot, NodeUpgradeStatus, NodeView, UpgradeView
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_state import LANES, UpgradeState, lane_index
from gputui.ui.render.style import BOLD, HELD_LOOK, PLAIN, Palette, status_word, upgrade_look

#: short names for the flow line, so all lanes fit in 80 columns
SHORT: dict[str, str] = {state: upgrade_look(state).word for state in LANES}


def lane_role(state: str) -> str:
    """Palette role of a lane: the upgrade state's role (:func:`upgrade_look`), the same
    role the node list and the node detail give that state."""
    return upgrade_look(state).role


def lane_of(view: UpgradeView, node: str) -> str:
    """The lane a node is in (its state)."""
    status = view.nodes.get(node)
    return status.state if status is not None else ""


#: what the upgrade policy is read from (ClusterPolicy, or NVIDIADriver CRs)
_POLICY_INPUTS = ("clusterpolicies", "nvidiadrivers")


def policy_unread(snapshot: ClusterSnapshot) -> str:
    """"loading" while the policy's sources are not listed yet, "unknown" when one cannot
    be read (403), "" once read: no policy must not be said of one not read yet."""
    if snapshot.loading & set(_POLICY_INPUTS):
        return "loading"
    if any(r.split(".", 1)[0] in _POLICY_INPUTS for r in snapshot.unreadable):
        return "unknown"
    return ""


def policy_line(view: UpgradeView, unread: str = "") -> str:
    """E.g. ``maxParallelUpgrades 4, maxUnavailable 25% (=2 of 8), waitForCompletion
    app=trainer (never times out), drain off``: the raw ``maxUnavailable`` next to what it
    resolves to, since percentages round up against the managed total. ``unread`` is
    :func:`policy_unread`'s word: without a policy, it says loading or unknown, not none."""
    policy = view.policy
    if policy is None and unread == "loading":
        return "… loading: the driver upgrade policy (ClusterPolicy, NVIDIADrivers) is being read"
    if policy is None and unread:
        return "? driver upgrade policy unknown: the ClusterPolicy or NVIDIADrivers cannot be read"
    if policy is None:
        return "no driver upgrade policy: the operator manages no driver here"
    text = policy.describe()
    raw = f"maxUnavailable {policy.max_unavailable}"
    text = text.replace(raw, f"{raw} (={view.max_unavailable} of {view.total})", 1)
    if not policy.drain_enable:
        text += ", drain off"
    return text


def slot_text(view: UpgradeView, palette: Palette = PLAIN) -> Text:
    """``slots 4 of 4 in use (1 failed) · 0 free · unavailable 1 of max 2``."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if view.policy is None:
        return text
    text.append("slots ", style=palette.role("muted"))
    full = bool(view.max_parallel) and view.in_progress >= view.max_parallel
    text.append(view.slot_line, style=palette.role("warn") if full else "")
    text.append(f" · {view.available_slots} free", style=palette.role("muted"))
    text.append(f" · unavailable {view.unavailable} of max {view.max_unavailable}",
                style=palette.role("muted"))
    return text


def blocked_text(view: UpgradeView, palette: Palette = PLAIN) -> Text | None:
    """The banner when the controller is stopped for the whole cluster, else None."""
    if view.blocked:
        return Text(f"✖ blocked: {view.blocked}. The upgrade controller moves no node "
                    "until this is fixed.", style=palette.role("crit"))
    if view.policy is not None and not view.enabled:
        return Text("‖ autoUpgrade is off: states below are frozen", style=palette.role("paused"))
    return None


def flow_text(view: UpgradeView, palette: Palette = PLAIN) -> Text:
    """Counts per lane in state order, e.g. ``required 2 › cordon 0 › jobs 3 ...``."""
    text = Text()
    counts = {state: len(view.lanes.get(state, ())) for state in LANES}
    shown = [state for state in LANES if state or counts[state]]
    for i, state in enumerate(shown):
        if i:
            text.append(" · " if state in (UpgradeState.FAILED, UpgradeState.UNKNOWN) else " › ",
                        style=palette.role("muted"))
        style = palette.role(lane_role(state)) if counts[state] else palette.role("muted")
        text.append(f"{SHORT[state]} {counts[state]}", style=style)
    return text


@dataclass(frozen=True, slots=True)
class LaneRow:
    """One row of the lanes table: a lane heading (``node`` None) or a node in a lane."""

    key: str
    lane: str
    node: str | None
    label: str
    since: str = ""
    skip: bool = False
    reason: str = ""

    @property
    def order(self) -> tuple[int, int, str]:
        """Sort key: lane position, heading before its nodes, then node name."""
        return lane_index(self.lane), 0 if self.node is None else 1, self.node or ""


def lane_key(state: str) -> str:
    """Row key of a lane heading (node names never contain ``:``)."""
    return f"lane:{state or 'unknown'}"


def node_reason(status: NodeUpgradeStatus) -> str:
    """Why the node waits; for a failed node, its last GPUDriverUpgrade event."""
    if status.skip:
        return "held: nvidia.com/gpu-driver-upgrade.skip=true" + (
            f"; {status.wait_reason}" if status.wait_reason else "")
    if status.state == UpgradeState.FAILED and status.last_event is not None:
        return status.wait_reason or status.last_event.message
    return status.wait_reason


def lane_rows(view: UpgradeView, now: float) -> list[LaneRow]:
    """Headings for non-empty lanes and one row per node, in display order."""
    rows: list[LaneRow] = []
    for state in LANES:
        names = view.lanes.get(state, ())
        if not names:
            continue
        rows.append(LaneRow(lane_key(state), state, None,
                            f"{state or 'not evaluated'} ({len(names)})"))
        for name in names:
            status = view.nodes.get(name) or NodeUpgradeStatus(name, state)
            since = duration(now - status.since) if status.since is not None else ""
            rows.append(LaneRow(name, state, name, name, since, status.skip,
                                node_reason(status)))
    return rows


def selected_text(status: NodeUpgradeStatus | None, now: float,
                  palette: Palette = PLAIN, managed: int = 1) -> Text:
    """The node under the cursor in full: state, how long, why, and its last event."""
    if status is None:
        note = ("no node is managed by the driver upgrade controller" if not managed
                else "no node selected (a lane heading)")
        return Text(note, style=palette.role("muted"))
    text = Text()
    text.append(status.node, style="bold")
    text.append(f"  {status.state or 'not evaluated'}", style=palette.role(lane_role(status.state)))
    if status.since is not None:
        text.append(f" for {duration(now - status.since)}")
    if status.skip:
        text.append(f"  {HELD_LOOK.symbol} {HELD_LOOK.word} (skip label)",
                    style=palette.look(HELD_LOOK))
    text.append("   enter: pipeline", style=palette.role("muted"))
    if status.wait_reason:
        text.append(f"\nwhy: {status.wait_reason}")
    event = status.last_event
    if event is not None:
        age = f"{duration(now - event.time)} ago" if event.time is not None else "time unknown"
        style = palette.role("warn") if event.type == "Warning" else ""
        text.append(f"\nlast GPUDriverUpgrade event ({event.type}, {age}): ", style=style)
        text.append(event.message)
    return text


def node_side_text(node: NodeView | None, now: float, palette: Palette = PLAIN) -> Text:
    """What the wide layout adds beside the lanes: the driver and validator pods the
    controller watches (restarts against its >10 rule) and the GPU pods that hold the node."""
    if node is None:
        return Text()
    text = Text()
    for operand in ("driver", "operator-validator"):
        stage = node.pipeline.stage(operand)
        if stage is None:
            continue
        text.append(f"{operand}: ", style=BOLD)
        text.append(status_word(stage.status), style=palette.status(stage.status))
        if stage.pod:
            text.append(f" · {stage.shown_restarts} restarts · {stage.pod}")
        if stage.detail:
            text.append(f"\n  {stage.detail}", style=palette.role("muted"))
        text.append("\n")
    text.append(f"GPU pods on the node ({len(node.gpu_pods)})", style=BOLD)
    for pod in node.gpu_pods:
        age = duration(now - pod.start_time) if pod.start_time is not None else "—"
        labels = ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
        text.append(f"\n  {pod.namespace}/{pod.name}  {pod.phase}  {pod.gpus} GPU  {age}")
        if labels:
            text.append(f"  {labels}", style=palette.role("muted"))
    return text


def render_upgrades(view: UpgradeView, now: float, palette: Palette = PLAIN,
                    unread: str = "") -> RenderableType:
    """The whole upgrades view as one renderable (used by tests and narrow print-outs)."""
    parts: list[RenderableType] = [Text(policy_line(view, unread)), slot_text(view, palette)]
    banner = blocked_text(view, palette)
    if banner is not None:
        parts.append(banner)
    parts.append(flow_text(view, palette))
    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=True)
    table.add_column("node", no_wrap=True)
    table.add_column("for", justify="right", no_wrap=True)
    table.add_column("why", ratio=1, overflow="ellipsis", no_wrap=True)
    for row in lane_rows(view, now):
        if row.node is None:
            table.add_row(Text(f"▾ {row.label}", style=palette.role(lane_role(row.lane))), "", "")
        else:
            table.add_row(f"  {row.label}", row.since, row.reason)
    parts.append(table)
    return Group(*parts)
