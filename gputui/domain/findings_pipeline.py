"""Node findings about the operand pipeline and the node itself: NotReady, GPUs missing from
allocatable, driver/operand/validator pods that fail or stay not ready too long.

Each rule separates a healthy cluster's normal life from a fault. A node joining (the driver
compiles for many minutes while everything else waits behind it) and a reboot are normal
within the grace periods of :mod:`gputui.domain.grace`; they give one ``info`` saying what is
happening and until when that is normal. Past the grace, or when a stage actually fails
(CrashLoopBackOff, an error state), the finding fires at full severity and names the stage
whose own failure holds the chain up (``NodePipeline.first_broken``), not a stage waiting on it.
"""

from __future__ import annotations

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext
from gputui.domain.findings_mig import symptom
from gputui.domain.grace import clock, grace_source, normal_until
from gputui.domain.hints import driver_hint, validator_layer
from gputui.domain.model import Finding, NodeView, PipelineStage, Severity, StageStatus
from gputui.domain.pods import ContainerInfo
from gputui.domain.thresholds import SOURCES
from gputui.domain.upgrade_state import in_step

#: operands whose failure takes GPUs out of allocatable
_GPU_PATH = frozenset({"driver", "container-toolkit", "device-plugin", "operator-validator"})


def node_not_ready(ctx: NodeContext) -> list[Finding]:
    """The node's Ready condition is not True: routine for a reboot, a fault when it lasts."""
    if ctx.node.ready:
        return []
    age = f" for {ctx.age(ctx.ready_since)}" if ctx.ready_since else ""
    limit = ctx.thresholds.node_not_ready_minutes
    if ctx.ready_since is not None and not ctx.over(ctx.ready_since, limit):
        until = clock(ctx.ready_since + limit * 60.0)
        return [ctx.finding(
            C.NODE_NOT_READY,
            f"{ctx.node.name} is NotReady{age}: {ctx.ready_reason}; normal for a reboot until "
            f"{until} ({limit:g} min, {SOURCES['node_not_ready_minutes']})",
            "Nothing to do yet: a rebooting node comes back Ready and its GPU pipeline restarts.",
            severity=Severity.INFO)]
    return [ctx.finding(C.NODE_NOT_READY,
                        f"{ctx.node.name} is NotReady{age}: {ctx.ready_reason}",
                        "Check the kubelet and the machine (console, cloud status); its GPU "
                        "pods are not running. Cordon it if it flaps.")]


def _unavailable_numbers(node: NodeView) -> tuple[int, int, int]:
    """(capacity, allocatable, units expected from the GPUs the node has)."""
    expected = node.gpu_count * max(node.sharing_replicas, 1)
    # GFD labels MIG-enabled full GPUs without sharing (``gpu.replicas=0``, k8s-device-plugin
    # ``internal/lm/mig-strategy.go`` newGPULabelers): they give MIG devices, not nvidia.com/gpu,
    # and under mixed one without instances gives none (all-enabled)
    migged = "-MIG-" in node.product or node.labels.get(L.GPU_REPLICAS) == "0" or any(
        e.name.startswith(L.RESOURCE_MIG_PREFIX) for e in node.resources.entries)
    return node.resources.capacity, node.resources.allocatable, 0 if migged else expected


def coming_up(ctx: NodeContext) -> tuple[PipelineStage, float] | None:
    """(the stage holding the pipeline up, until when that is normal) while a node's GPU
    pipeline is still inside its grace; None when it is failing, late or not coming up."""
    broken = ctx.node.pipeline.first_broken()
    if broken is None or broken.operand not in _GPU_PATH:
        return None
    if broken.status not in (StageStatus.PROGRESSING, StageStatus.ABSENT, StageStatus.PAUSED):
        return None
    until = normal_until(ctx.node.pipeline, broken, ctx.pods, ctx.thresholds)
    if until is None and broken.status is not StageStatus.PROGRESSING:
        start = max(filter(None, (ctx.node.created, ctx.ready_since)), default=None)
        until = start + 60.0 * ctx.thresholds.driver_startup_minutes if start else None
    if until is None or until <= ctx.now:
        return None
    ctx.deadlines.append(until)
    return broken, until


def gpus_unavailable(ctx: NodeContext) -> list[Finding]:
    """Allocatable below capacity, or capacity below what the node's GPUs should give."""
    node = ctx.node
    capacity, allocatable, expected = _unavailable_numbers(node)
    if allocatable >= capacity >= expected:
        return []
    have = max(capacity, expected)
    message = f"{allocatable} of {have} GPUs allocatable on {node.name}"
    if capacity < expected:
        message += f" (capacity {capacity} below the {expected} the node's GPUs give)"
    planned = _planned(node)
    mig_empty = symptom(ctx)
    if mig_empty:
        return [ctx.finding(C.GPUS_UNAVAILABLE, message + mig_empty,
                            "Apply a MIG layout with instances: the GPUs follow.",
                            severity=Severity.INFO)]
    if planned:
        return [ctx.finding(C.GPUS_UNAVAILABLE, f"{message} {planned}",
                            "Expected: the GPUs come back when the change finishes.",
                            severity=Severity.INFO)]
    if not node.ready:
        return [ctx.finding(C.GPUS_UNAVAILABLE,
                            f"{message} while the node is NotReady",
                            "See node-not-ready: the GPUs follow the node.",
                            severity=Severity.INFO)]
    rising = coming_up(ctx)
    if rising is not None:
        stage, until = rising
        return [ctx.finding(
            C.GPUS_UNAVAILABLE,
            f"{message} while the {stage.operand} stage comes up ({stage.detail or 'starting'}); "
            f"normal until {clock(until)} ({grace_source(stage.operand, ctx.thresholds)})",
            "Nothing to do yet: the chain driver -> toolkit -> device plugin is starting.",
            severity=Severity.INFO)]
    broken = node.pipeline.first_broken()
    if broken is not None and broken.operand in _GPU_PATH and broken.status not in (
            StageStatus.PAUSED, StageStatus.UNKNOWN):
        # the symptom of a stage that has its own finding: that finding leads the node's row
        return [ctx.finding(
            C.GPUS_UNAVAILABLE, message,
            f"The {broken.operand} stage is {broken.status.value}: {broken.detail}. Fix it "
            "first.")]
    severity = Severity.CRITICAL if allocatable == 0 else Severity.WARNING
    unread = (f"{', '.join(node.unknown)} cannot be read, so the stage holding the GPUs is "
              "unknown. " if node.unknown else "")
    return [ctx.finding(
        C.GPUS_UNAVAILABLE, message,
        unread + "The device plugin counts only healthy GPUs: look for XIDs on the metrics "
        "pane and read the device-plugin log on this node.", severity=severity)]


def _planned(node: NodeView) -> str:
    """Why the GPUs are away on purpose (a driver upgrade step or a MIG change), or ""."""
    if in_step(node.upgrade_state):
        return f"during the driver upgrade ({node.upgrade_state})"
    if node.mig_state in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING):
        return f"during the MIG change to {node.mig_config}"
    return ""


def driver_pod_failing(ctx: NodeContext) -> list[Finding]:
    """The driver pod crash-loops, or stays not ready past its startup probe budget."""
    stage = ctx.node.pipeline.stage("driver")
    if stage is None or stage.pod is None:
        return []
    pod = next((p for p in ctx.pods if p.name == stage.pod), None)
    message = f"driver pod {stage.pod} on {ctx.node.name}: {stage.detail}"
    if stage.status is StageStatus.FAILED:
        severity = Severity.CRITICAL
    elif stage.status is StageStatus.PROGRESSING and stage.detail != "terminating":
        until = normal_until(ctx.node.pipeline, stage, ctx.pods, ctx.thresholds)
        if until is None or until > ctx.now:
            if until is not None:
                ctx.deadlines.append(until)
            return []
        severity = Severity.WARNING
        message += f"; not ready past {grace_source('driver', ctx.thresholds)}"
    else:
        return []
    return [ctx.finding(C.DRIVER_POD_FAILING, message,
                        driver_hint(ctx.node, stage, pod), "driver", severity=severity)]


def operand_pod_failing(ctx: NodeContext) -> list[Finding]:
    """Other operands crash-looping, or the one holding the chain up not ready past grace."""
    found = []
    cause = ctx.node.pipeline.first_broken()
    for stage in ctx.node.pipeline.stages:
        if stage.operand in ("driver", "operator-validator") or stage.pod is None:
            continue
        late = False
        if stage is cause and stage.status is StageStatus.PROGRESSING:
            until = normal_until(ctx.node.pipeline, stage, ctx.pods, ctx.thresholds)
            late = until is not None and ctx.over(until, 0.0)
        if stage.status is not StageStatus.FAILED and not late:
            continue
        age = f" for {ctx.age(stage.since)}" if late and stage.since else ""
        past = f" (not ready past {grace_source(stage.operand, ctx.thresholds)})" if late else ""
        message = f"{stage.operand} pod {stage.pod} on {ctx.node.name}{age}: {stage.detail}{past}"
        mig_empty = symptom(ctx) if stage.operand == "device-plugin" else ""
        if mig_empty:  # under single the plugin exits on a MIG GPU without instances
            found.append(ctx.finding(
                C.OPERAND_POD_FAILING, message + mig_empty,
                "Apply a MIG layout with instances: the device plugin starts again.", stage.operand,
                severity=Severity.INFO))
            continue
        found.append(ctx.finding(
            C.OPERAND_POD_FAILING, message,
            f"Open the log of container {stage.container or stage.operand} in pod {stage.pod}; "
            "what it waits on is healthy, so the fault is in this operand.", stage.operand))
    return found


def validator_stuck(ctx: NodeContext) -> list[Finding]:
    """The validator sits in one init container: that names the layer (§8.4). Blame goes to
    the stage that init container waits on when that stage is the one failing."""
    pipeline = ctx.node.pipeline
    stage = pipeline.stage("operator-validator")
    pod = next((p for p in ctx.pods if stage is not None and p.name == stage.pod), None)
    current = pod.current_init() if pod is not None else None
    if stage is None or pod is None or current is None:
        return []
    since = current.started_at or pod.start_time or pod.created
    age = f" for {ctx.age(since)}" if since is not None else ""
    meaning, hint = validator_layer(current.name, ctx.pods)
    message = f"validator on {ctx.node.name} stuck in {current.name}{age}: {meaning}"
    mig_empty = symptom(ctx) if current.name in _GPU_CHECKS else ""
    if mig_empty:  # no GPU resource to find: gpu-operator cmd/nvidia-validator/main.go
        return [ctx.finding(C.VALIDATOR_STUCK, message + mig_empty,
                            "Apply a MIG layout with instances; the validator follows.",
                            current.name, severity=Severity.INFO)]
    cause = pipeline.first_broken()
    if cause is not None and cause is not stage and pipeline.waits_on(stage) is not None:
        if cause.status is not StageStatus.FAILED:
            return []  # waiting behind a stage still inside its grace: coming up, not stuck
        return [ctx.finding(
            C.VALIDATOR_STUCK,
            f"{message} (waiting on the failed {cause.operand} stage: {cause.detail})",
            f"Fix the {cause.operand} stage first; the validator follows.", current.name,
            severity=Severity.INFO)]
    retrying = _retrying(ctx, current)
    if not current.failing and not retrying:
        until = normal_until(pipeline, stage, ctx.pods, ctx.thresholds)
        if until is None or not ctx.over(until, 0.0):
            return []
    state = (f" ({stage.detail})" if current.failing else
             f" (gave up {current.restarts}x, running again)" if retrying else
             f" (past {grace_source('operator-validator', ctx.thresholds)})")
    return [ctx.finding(C.VALIDATOR_STUCK,
                        f"validator on {ctx.node.name} stuck in {current.name}{age}{state}: "
                        f"{meaning}", hint, current.name)]


#: the validator's checks that need a usable GPU (a CUDA device, a GPU resource)
_GPU_CHECKS = frozenset({"cuda-validation", "plugin-validation"})
#: a restarted cuda-validation still running after this long has given up before (a
#: reboot's restart finishes in seconds)
RETRY_SECONDS = 60.0


def _retrying(ctx: NodeContext, current: ContainerInfo) -> bool:
    """A check running again after a failed run (its last exit non-zero: it gave up), or
    cuda-validation restarted and still running past :data:`RETRY_SECONDS` (its last exit
    unknown): it gave up its 60 x 5 s budget before (gpu-operator
    ``cmd/nvidia-validator/main.go``), so the new attempt has no grace."""
    if current.retrying:
        return True
    if current.name != "cuda-validation" or current.restarts == 0 or current.failing:
        return False
    return ctx.over(current.started_at, RETRY_SECONDS / 60.0)
