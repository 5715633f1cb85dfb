"""Node findings: one small function per rule, each saying what is wrong and what next.

Rules read a :class:`NodeContext`. Time-based rules register the moment they would start to
fire (``ctx.due``) so the builder knows when to re-evaluate a node nobody touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gputui.domain import labels as L
from gputui.domain.hints import driver_hint, validator_layer
from gputui.domain.model import (
    Finding,
    NodeView,
    PipelineStage,
    Severity,
    StageStatus,
    UpgradeEvent,
    UpgradePolicy,
)
from gputui.domain.pods import PodInfo
from gputui.domain.thresholds import ThresholdsLike
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_events import failure_summary
from gputui.domain.upgrade_reasons import active_wait_reason, state_since

ACTIVE_UPGRADE_STATES = frozenset(L.UPGRADE_STATES) - {
    L.STATE_UNKNOWN, L.STATE_REQUIRED, L.STATE_DONE, L.STATE_FAILED}


@dataclass
class NodeContext:
    """What node rules may read; ``deadlines`` collects future re-evaluation times."""

    node: NodeView
    pods: Sequence[PodInfo]
    thresholds: ThresholdsLike
    now: float
    label_times: Mapping[str, float] = field(default_factory=dict)
    policy: UpgradePolicy | None = None
    event: UpgradeEvent | None = None
    ready_reason: str = ""
    ready_since: float | None = None
    mig_configs: tuple[str, tuple[str, ...]] | None = None
    deadlines: list[float] = field(default_factory=list)

    def over(self, since: float | None, minutes: float) -> bool:
        """``since`` is more than ``minutes`` ago; otherwise remember when it will be."""
        if since is None:
            return False
        due = since + minutes * 60.0
        if due <= self.now:
            return True
        self.deadlines.append(due)
        return False

    def finding(self, code: str, severity: Severity, message: str, hint: str,
                pane: str = "nodes", subject: str = "") -> Finding:
        """A finding about this node."""
        return Finding(code, severity, self.node.name, message, hint, pane, subject)


Rule = Callable[[NodeContext], list[Finding]]


def node_not_ready(ctx: NodeContext) -> list[Finding]:
    """The node's Ready condition is not True: nothing on it runs."""
    if ctx.node.ready:
        return []
    age = f" for {duration(ctx.now - ctx.ready_since)}" if ctx.ready_since else ""
    return [ctx.finding("node-not-ready", Severity.WARNING,
                        f"{ctx.node.name} is NotReady{age}: {ctx.ready_reason}",
                        "Check the kubelet and the machine (console, cloud status); its GPU "
                        "pods are not running. Cordon it if it flaps.")]


#: operands whose failure takes GPUs out of allocatable
_GPU_PATH = frozenset({"driver", "container-toolkit", "device-plugin"})


def _unavailable_numbers(node: NodeView) -> tuple[int, int, int]:
    """(capacity, allocatable, units expected from the GPUs the node has)."""
    expected = node.gpu_count * max(node.sharing_replicas, 1)
    migged = "-MIG-" in node.product or any(
        e.name.startswith(L.RESOURCE_MIG_PREFIX) for e in node.resources.entries)
    return node.resources.capacity, node.resources.allocatable, 0 if migged else expected


def gpus_unavailable(ctx: NodeContext) -> list[Finding]:
    """Allocatable below capacity, or capacity below what the node's GPUs should give."""
    node = ctx.node
    capacity, allocatable, expected = _unavailable_numbers(node)
    if allocatable >= capacity >= expected:
        return []
    have = max(capacity, expected)
    planned = node.upgrade_state in ACTIVE_UPGRADE_STATES or node.mig_state == L.MIG_STATE_PENDING
    severity = Severity.CRITICAL if allocatable == 0 and not planned else Severity.WARNING
    message = f"{allocatable} of {have} GPUs allocatable on {node.name}"
    if capacity < expected:
        message += f" (capacity {capacity} below the {expected} the node's GPUs give)"
    if planned:
        message += " during a planned driver upgrade or MIG change"
    broken = node.pipeline.first_broken()
    if broken is not None and broken.operand in _GPU_PATH and (
            broken.status is not StageStatus.PAUSED):
        hint = (f"The {broken.operand} stage is {broken.status.value}: {broken.detail}. "
                "Fix it first.")
    else:
        hint = ("The device plugin counts only healthy GPUs: look for XIDs on the metrics pane "
                "and read the device-plugin log on this node.")
    return [ctx.finding("gpus-unavailable", severity, message, hint, "pipeline")]


def operand_paused(ctx: NodeContext) -> list[Finding]:
    """Deploy labels left at a paused value: those operands are absent from the node."""
    node = ctx.node
    mig_busy = node.mig_state in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING)
    paused = [d for d in node.paused_labels
              if not (mig_busy and d.value.endswith(L.PAUSED_FOR_MIG_CHANGE))]
    if not paused:
        return []
    times = [ctx.label_times.get(L.DEPLOY_PREFIX + d.operand) for d in paused]
    known = [t for t in times if t is not None]
    since = min(known) if known else None
    driver = node.pipeline.stage("driver")
    driver_busy = driver is not None and driver.status is StageStatus.PROGRESSING
    long = ctx.over(since, ctx.thresholds.operand_not_ready_minutes)
    severity = Severity.WARNING if long or (since is None and not driver_busy) else Severity.INFO
    names = ", ".join(f"{d.operand}={d.value}" for d in paused)
    age = f" for {duration(ctx.now - since)}" if since is not None else ""
    hint = ("k8s-driver-manager restores these after the driver reloads; if the driver pod is "
            "gone or stuck, fix it, or set the labels back to true."
            if any(L.PAUSED_FOR_DRIVER_UPGRADE in d.value for d in paused) else
            "mig-manager restores these after a MIG change; if it is not running one, set the "
            "labels back to true.")
    return [ctx.finding("operand-paused", severity,
                        f"operands paused on {node.name}{age}: {names}", hint, "pipeline")]


def driver_pod_failing(ctx: NodeContext) -> list[Finding]:
    """The driver pod crash-loops, or has not become ready for too long."""
    stage = ctx.node.pipeline.stage("driver")
    if stage is None or stage.pod is None:
        return []
    pod = next((p for p in ctx.pods if p.name == stage.pod), None)
    if stage.status is StageStatus.FAILED:
        severity = Severity.CRITICAL
    elif stage.status is StageStatus.PROGRESSING and ctx.over(
            stage.since, ctx.thresholds.operand_not_ready_minutes):
        severity = Severity.WARNING
    else:
        return []
    message = f"driver pod {stage.pod} on {ctx.node.name}: {stage.detail}"
    return [ctx.finding("driver-pod-failing", severity, message,
                        driver_hint(ctx.node, stage, pod), "pipeline", "driver")]


def operand_pod_failing(ctx: NodeContext) -> list[Finding]:
    """Other operands crash-looping, or the first broken one not ready for too long."""
    found = []
    first = ctx.node.pipeline.first_broken()
    for stage in ctx.node.pipeline.stages:
        if stage.operand in ("driver", "operator-validator") or stage.pod is None:
            continue
        stuck = (stage is first and stage.status is StageStatus.PROGRESSING
                 and ctx.over(stage.since, ctx.thresholds.operand_not_ready_minutes))
        if stage.status is not StageStatus.FAILED and not stuck:
            continue
        age = f" for {duration(ctx.now - stage.since)}" if stuck and stage.since else ""
        found.append(ctx.finding(
            "operand-pod-failing", Severity.WARNING,
            f"{stage.operand} pod {stage.pod} on {ctx.node.name}{age}: {stage.detail}",
            f"Open the log of container {stage.container or stage.operand} in pod {stage.pod}; "
            "earlier stages are healthy, so the fault is in this operand.",
            "pipeline", stage.operand))
    return found


def validator_stuck(ctx: NodeContext) -> list[Finding]:
    """The validator sits in one init container: that names the broken layer (§8.4)."""
    stage = ctx.node.pipeline.stage("operator-validator")
    pod = next((p for p in ctx.pods if stage is not None and p.name == stage.pod), None)
    current = pod.current_init() if pod is not None else None
    if stage is None or pod is None or current is None:
        return []
    since = current.started_at or pod.start_time or pod.created
    if not current.failing and not ctx.over(since, ctx.thresholds.validator_stuck_minutes):
        return []
    meaning, hint = validator_layer(current.name, ctx.pods)
    age = f" for {duration(ctx.now - since)}" if since is not None else ""
    state = f" ({stage.detail})" if current.failing else ""
    message = f"validator on {ctx.node.name} stuck in {current.name}{age}{state}: {meaning}"
    cause = _failed_before(ctx.node, "operator-validator")
    if cause is not None:
        # the validator only waits for the broken stage: point the operator's eye there
        return [ctx.finding(
            "validator-stuck", Severity.INFO,
            f"{message} (waiting on the failed {cause.operand} stage)",
            f"Fix the {cause.operand} stage first ({cause.detail}); the validator follows.",
            "pipeline", current.name)]
    return [ctx.finding("validator-stuck", Severity.WARNING, message, hint, "pipeline",
                        current.name)]


def _failed_before(node: NodeView, operand: str) -> PipelineStage | None:
    """The first failed stage ahead of ``operand`` in the chain (driver, toolkit), if any."""
    for stage in node.pipeline.stages:
        if stage.operand == operand:
            return None
        if stage.status is StageStatus.FAILED:
            return stage
    return None


def upgrade_failed(ctx: NodeContext) -> list[Finding]:
    """The node is in ``upgrade-failed``: it holds a slot and stays cordoned."""
    if ctx.node.upgrade_state != L.STATE_FAILED:
        return []
    failed = failure_summary(ctx.event)
    told = f" {failed}" if failed else ""
    return [ctx.finding(
        "upgrade-failed", Severity.WARNING, f"driver upgrade failed on {ctx.node.name}{told}",
        "Check the driver pod (restarts, log) and the GPUDriverUpgrade events in namespace "
        "default; then retry by setting nvidia.com/gpu-driver-upgrade-state=upgrade-required "
        "(finished steps are skipped). A failed node holds an upgrade slot.", "upgrade")]


def upgrade_stalled(ctx: NodeContext) -> list[Finding]:
    """An active upgrade state held longer than the threshold."""
    state = ctx.node.upgrade_state
    if state not in ACTIVE_UPGRADE_STATES or ctx.policy is None:
        return []
    since = state_since(ctx.node, ctx.event)
    if not ctx.over(since, ctx.thresholds.upgrade_stalled_minutes) or since is None:
        return []
    reason = active_wait_reason(ctx.node, ctx.policy, ctx.now)
    return [ctx.finding(
        "upgrade-stalled", Severity.WARNING,
        f"{ctx.node.name} in {state} for {duration(ctx.now - since)}: {reason}",
        "Open the upgrades pane: wait-for-jobs waits for the selected pods (hold the node with "
        "the skip label if a job runs for days); pod-restart/validation follow the driver and "
        "validator pods.", "upgrade")]


def _unknown(ctx: NodeContext) -> str:
    """": no such config in X (it offers a, b, c)" when the config name is not offered."""
    if ctx.mig_configs is None or not ctx.mig_configs[1]:
        return ""
    source, names = ctx.mig_configs
    if ctx.node.mig_config in names:
        return ""
    offered = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return f": no such config in {source} (it offers {offered})"


def mig_config_failed(ctx: NodeContext) -> list[Finding]:
    """mig-manager reported ``failed``, or GFD flags the layout ``MIG-INVALID`` (§5.4)."""
    node = ctx.node
    stage = node.pipeline.stage("mig-manager")
    where = f"pod {stage.pod}" if stage is not None and stage.pod else "the mig-manager pod"
    if node.mig_state == L.MIG_STATE_FAILED:
        return [ctx.finding(
            "mig-config-failed", Severity.WARNING,
            f"MIG config {node.mig_config or '(none)'} failed on {node.name}{_unknown(ctx)}",
            f"Read the MIG manager log ({where} on this node): the config may not exist for "
            "this GPU, or GPU processes blocked the change. Setting nvidia.com/mig.config "
            "again retries.", "mig")]
    if node.product.endswith("-MIG-INVALID"):
        return [ctx.finding(
            "mig-config-failed", Severity.WARNING,
            f"MIG layout {node.mig_config or ''} is invalid under the single strategy on "
            f"{node.name}: the node advertises no GPUs",
            "single needs every GPU MIG-enabled with one identical profile: pick an "
            "all-<profile> config, or use the mixed strategy.", "mig")]
    return []


def mig_config_pending(ctx: NodeContext) -> list[Finding]:
    """``mig.config.state`` pending (or rebooting) longer than the threshold."""
    node = ctx.node
    if node.mig_state not in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING):
        return []
    if not ctx.over(node.mig_since, ctx.thresholds.mig_pending_minutes) or node.mig_since is None:
        return []
    paused = [d.operand for d in node.paused_labels if L.PAUSED_FOR_MIG_CHANGE in d.value]
    labels_note = f"; {', '.join(paused)} paused-for-mig-change" if paused else ""
    return [ctx.finding(
        "mig-config-pending", Severity.WARNING,
        f"MIG change to {node.mig_config} on {node.name} {node.mig_state} for "
        f"{duration(ctx.now - node.mig_since)}{labels_note}; "
        f"{node.resources.allocatable} GPUs allocatable",
        "mig-manager waits for GPU clients to stop: check the MIG manager log and for GPU "
        "pods still on the node. A wedged change leaves deploy labels paused (mig-parted #485).",
        "mig")]


NODE_RULES: tuple[Rule, ...] = (
    node_not_ready, gpus_unavailable, driver_pod_failing, operand_pod_failing, validator_stuck,
    operand_paused, upgrade_failed, upgrade_stalled, mig_config_failed, mig_config_pending,
)


def node_findings(ctx: NodeContext) -> list[Finding]:
    """Every node rule's findings, most severe first."""
    found = [finding for rule in NODE_RULES for finding in rule(ctx)]
    return sorted(found, key=lambda f: -f.severity.rank)
