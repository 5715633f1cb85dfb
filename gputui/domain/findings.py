"""Node findings: one small function per rule, each saying what is wrong and what next.

Rules read a :class:`NodeContext`. Time-based rules register the moment they would start to
fire (``ctx.deadlines``) so the builder knows when to re-evaluate a node nobody touched. The
pipeline rules (NotReady, GPUs unavailable, driver/operand/validator pods) live in
:mod:`gputui.domain.findings_pipeline`; this module holds labels, upgrades and MIG, and the
rule order: causes before symptoms, so a node's first finding names the cause.
"""

from __future__ import annotations

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext, Rule
from gputui.domain.findings_mig import mig_no_instances, no_instances_config
from gputui.domain.findings_pipeline import (
    driver_pod_failing,
    gpus_unavailable,
    node_not_ready,
    operand_pod_failing,
    validator_stuck,
)
from gputui.domain.findings_upgrade import held_by_choice
from gputui.domain.grace import clock, grace_source, normal_until
from gputui.domain.model import DeployLabel, Finding, Severity, StageStatus
from gputui.domain.operands_absent import operands_absent
from gputui.domain.sharing import sharing_config_missing
from gputui.domain.thresholds import SOURCES
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_advice import failed_hint, waiting_for_jobs_hint
from gputui.domain.upgrade_events import NO_EVENTS, STEP_EXPIRED, failure_summary, inferred_step
from gputui.domain.upgrade_reasons import active_wait_reason, expected_wait, state_since
from gputui.domain.upgrade_state import UpgradeState, in_step

__all__ = ["NODE_RULES", "NodeContext", "Rule", "node_findings"]


def _paused_since(ctx: NodeContext, paused: list[DeployLabel]) -> float | None:
    times = [ctx.label_times.get(L.DEPLOY_PREFIX + d.operand) for d in paused]
    known = [t for t in times if t is not None]
    return min(known) if known else None


def _mig_paused(ctx: NodeContext, paused: list[DeployLabel]) -> Finding | None:
    """Labels paused by mig-manager: info while its change runs within the MIG grace."""
    node = ctx.node
    names = ", ".join(f"{d.operand}={d.value}" for d in paused)
    busy = node.mig_state in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING)
    limit = ctx.thresholds.mig_pending_minutes
    if busy and node.mig_since is not None and not ctx.over(node.mig_since, limit):
        return ctx.finding(
            C.OPERAND_PAUSED,
            f"operands paused on {node.name} by the MIG change to {node.mig_config} "
            f"({node.mig_state}): {names}; normal until {clock(node.mig_since + limit * 60)} "
            f"({limit:g} min, {SOURCES['mig_pending_minutes']})",
            "mig-manager restores them to true when the change finishes.", severity=Severity.INFO)
    why = (f"the MIG change to {node.mig_config} is {node.mig_state} for "
           f"{ctx.age(node.mig_since)}" if busy and node.mig_since is not None
           else f"no MIG change is running (mig.config.state={node.mig_state or 'unset'})")
    return ctx.finding(
        C.OPERAND_PAUSED,
        f"operands paused on {node.name}: {names}; {why}",
        "A wedged MIG change leaves these paused (mig-parted #485): read the mig-manager log; "
        "once no change is running, set the labels back to true.")


def _driver_paused(ctx: NodeContext, paused: list[DeployLabel]) -> Finding:
    """Labels paused by k8s-driver-manager: info while the driver pod restarts in grace."""
    node = ctx.node
    names = ", ".join(f"{d.operand}={d.value}" for d in paused)
    since = _paused_since(ctx, paused)
    age = f" for {ctx.age(since)}" if since is not None else ""
    driver = node.pipeline.stage("driver")
    until = (normal_until(node.pipeline, driver, ctx.pods, ctx.thresholds)
             if driver is not None and driver.status is StageStatus.PROGRESSING else None)
    if until is not None and not ctx.over(until, 0.0):
        return ctx.finding(
            C.OPERAND_PAUSED,
            f"operands paused on {node.name}{age} while the driver reloads: {names}; normal "
            f"until {clock(until)} ({grace_source('driver', ctx.thresholds)})",
            "k8s-driver-manager restores them to true once the new driver is loaded.",
            severity=Severity.INFO)
    return ctx.finding(
        C.OPERAND_PAUSED, f"operands paused on {node.name}{age}: {names}",
        "k8s-driver-manager restores these after the driver reloads; the driver pod is not "
        "reloading now, so fix it or set the labels back to true.")


def operand_paused(ctx: NodeContext) -> list[Finding]:
    """Deploy labels left at a paused value: those operands are absent from the node.

    Always reported (the contract); ``info`` while the driver reload or MIG change that
    paused them runs within its grace, ``warning`` once it is late or nothing runs.
    """
    paused = list(ctx.node.paused_labels)
    mig = [d for d in paused if d.value.endswith(L.PAUSED_FOR_MIG_CHANGE)]
    driver = [d for d in paused if d not in mig]
    found = [_driver_paused(ctx, driver)] if driver else []
    mig_finding = _mig_paused(ctx, mig) if mig else None
    return found + ([mig_finding] if mig_finding is not None else [])


def _driver_restarts(ctx: NodeContext) -> int:
    """The most restarts of a driver-pod container that is not ready (what
    ``isDriverPodFailing`` in k8s-operator-libs ``common_manager.go`` counts), 0 if none."""
    stage = ctx.node.pipeline.stage("driver")
    pod = next((p for p in ctx.pods if stage is not None and p.name == stage.pod), None)
    if pod is None:
        return 0
    return max((c.restarts for c in (*pod.init_containers, *pod.containers) if not c.ready),
               default=0)


def upgrade_failed(ctx: NodeContext) -> list[Finding]:
    """The node is in ``upgrade-failed``: it holds a slot and stays cordoned."""
    if ctx.node.upgrade_state != UpgradeState.FAILED:
        return []
    failed = failure_summary(ctx.event) if ctx.event is not None else NO_EVENTS
    if failed in (NO_EVENTS, STEP_EXPIRED):
        failed = inferred_step(_driver_restarts(ctx)) or failed
    told = f" {failed}" if failed else ""
    return [ctx.finding(
        C.UPGRADE_FAILED, f"driver upgrade failed on {ctx.node.name}{told}",
        failed_hint(ctx.node, ctx.event, ctx.budgets))]


def upgrade_stalled(ctx: NodeContext) -> list[Finding]:
    """An active upgrade step held longer than the threshold.

    A node in ``wait-for-jobs-required`` whose selected pods still run, with
    ``waitForCompletion.timeoutSeconds`` 0, waits exactly as configured: ``info``.
    (``upgrade-required`` nodes that cannot proceed are judged with the cluster's slot
    figures, in :mod:`gputui.domain.findings_upgrade`.)
    """
    state = ctx.node.upgrade_state
    if not in_step(state) or ctx.policy is None:
        return []
    since = state_since(ctx.node, ctx.event)
    reason = active_wait_reason(ctx.node, ctx.policy, ctx.now)
    if expected_wait(ctx.node, ctx.policy, ctx.now):
        age = f" for {ctx.age(since)}" if since is not None else ""
        return [ctx.finding(
            C.UPGRADE_STALLED,
            f"{ctx.node.name} in {state}{age}: {reason} (as waitForCompletion configures)",
            waiting_for_jobs_hint(ctx.node), severity=Severity.INFO)]
    if since is None or not ctx.over(since, ctx.thresholds.upgrade_stalled_minutes):
        return []
    return [ctx.finding(
        C.UPGRADE_STALLED,
        f"{ctx.node.name} in {state} for {ctx.age(since)}: {reason} (past "
        f"{ctx.thresholds.upgrade_stalled_minutes:g} min, {SOURCES['upgrade_stalled_minutes']})",
        "Open the upgrades pane: pod-restart/validation follow the driver and validator pods; "
        "pod deletion and drain follow their timeouts.")]


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
            C.MIG_CONFIG_FAILED,
            f"MIG config {node.mig_config or '(none)'} failed on {node.name}{_unknown(ctx)}",
            f"Read the MIG manager log ({where} on this node): the config may not exist for "
            "this GPU, or GPU processes blocked the change. mig-manager acts when "
            "nvidia.com/mig.config changes and when it starts, so setting the same value "
            f"again does nothing: fix the cause, then delete {where} on this node to retry "
            "(it applies the current label when it starts).")]
    if node.product.endswith("-MIG-INVALID") and no_instances_config(ctx) is None:
        return [ctx.finding(
            C.MIG_CONFIG_FAILED,
            f"MIG layout {node.mig_config or ''} is invalid under the single strategy on "
            f"{node.name}: the node advertises no GPUs",
            "single needs every GPU MIG-enabled with one identical profile: pick an "
            "all-<profile> config, or use the mixed strategy.")]
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
        C.MIG_CONFIG_PENDING,
        f"MIG change to {node.mig_config} on {node.name} {node.mig_state} for "
        f"{ctx.age(node.mig_since)}{labels_note}; "
        f"{node.resources.allocatable} GPUs allocatable (past "
        f"{ctx.thresholds.mig_pending_minutes:g} min, {SOURCES['mig_pending_minutes']})",
        "mig-manager waits for GPU clients to stop: check the MIG manager log and for GPU "
        "pods still on the node. A wedged change leaves deploy labels paused (mig-parted #485).")]


def gpu_node_unmanaged(ctx: NodeContext) -> list[Finding]:
    """NFD sees an NVIDIA GPU but the operator does not manage the node (§1.4, §1.5).

    The operator keys everything off ``nvidia.com/gpu.present=true``, which its
    NodeLabeling reconciler sets from the NFD PCI labels within seconds; a node without it
    after the operand grace gets no driver and no device plugin, silently. A node opted out
    with ``nvidia.com/gpu.deploy.operands=false`` is unmanaged by choice: info.
    (gpu-operator ``controllers/state_manager.go``, ``hasGPULabels``, ``hasOperandsDisabled``.)
    """
    node = ctx.node
    nfd = [key for key in L.NFD_GPU_LABELS if node.labels.get(key) == "true"]
    opted_out = node.labels.get(L.DEPLOY_OPERANDS, "").lower() == "false"
    if opted_out:
        return [ctx.finding(
            C.GPU_NODE_UNMANAGED,
            f"{node.name} is opted out ({L.DEPLOY_OPERANDS}=false): the operator deploys no "
            "driver or operand there", "Remove the label to have the operator manage it.",
            severity=Severity.INFO)]
    if node.gpu_present or not nfd:
        return []
    label = nfd[0].rsplit("/", 1)[-1]
    limit = ctx.thresholds.operand_not_ready_minutes
    new = node.created is not None and not ctx.over(node.created, limit)
    message = (f"NFD sees an NVIDIA GPU on {node.name} ({label}=true) but "
               f"{L.GPU_PRESENT} is {node.labels.get(L.GPU_PRESENT) or 'unset'}: the operator "
               "does not manage it")
    if new:
        return [ctx.finding(C.GPU_NODE_UNMANAGED,
                            message + " yet (a new node; the operator labels it in seconds)",
                            "Nothing to do yet.", severity=Severity.INFO)]
    return [ctx.finding(
        C.GPU_NODE_UNMANAGED, message,
        "Check that the gpu-operator Deployment runs (its node labeling sets gpu.present) and "
        "its log; no driver or device plugin will reach this node until it does.")]


#: causes before symptoms: at one severity, the first rule's finding leads the node's row
NODE_RULES: tuple[Rule, ...] = (
    driver_pod_failing, sharing_config_missing, operand_pod_failing, validator_stuck,
    upgrade_failed, upgrade_stalled, held_by_choice, mig_no_instances, mig_config_failed,
    mig_config_pending,
    operand_paused, gpu_node_unmanaged, operands_absent, node_not_ready, gpus_unavailable,
)


def node_findings(ctx: NodeContext) -> list[Finding]:
    """Every node rule's findings, most severe first, causes before symptoms."""
    found = [finding for rule in NODE_RULES for finding in rule(ctx)]
    return sorted(found, key=lambda f: -f.severity.rank)  # stable: rule order within a rank
