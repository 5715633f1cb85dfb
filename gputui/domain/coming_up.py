"""Is a node coming up? A judgement from the node's own pipeline and age, not its findings.

A joining node has no ``nvidia.com/gpu.count`` until gpu-feature-discovery labels it, and GFD
starts only after the driver, the toolkit and the validator's ``toolkit-ready`` marker
(gpu-operator ``assets/gpu-feature-discovery/0500_daemonset.yaml``: init container
``toolkit-validation``). While the driver compiles, such a node has no GPU count, so no GPU
finding can speak for it, yet the ClusterPolicy reports ``notReady``: the operator's
``isDaemonSetReady`` (``controllers/object_controls.go``) wants every scheduled operand pod
ready. What tells "coming up" from "stuck" is the node's own pipeline:

* it is a GPU node: ``nvidia.com/gpu.present`` (the operator's NodeLabeling) or one of NFD's
  NVIDIA PCI labels (``feature.node.kubernetes.io/pci-10de.present``), with or without a
  GPU count;
* no stage fails (CrashLoopBackOff, an image pull error, a failed pod) or is unknown;
* every stage that is not ready is inside its grace (:mod:`gputui.domain.grace`): a
  progressing stage from its own attempt and what it waits on, an operand not scheduled yet
  from the node's creation (or its return to Ready) plus the driver's startup budget, a
  paused one from the MIG change or driver reload that paused it;
* or the node is NotReady for less than Kubernetes' not-ready toleration (registering after
  a join, or a reboot);
* or every stage is ready, the last of them so recently that the operator may not have
  re-checked yet (it requeues every 5 s while notReady).

Nodes the driver upgrade controller has taken (an active upgrade state) are not judged here:
the upgrade explains them (the normal-life rule of :mod:`gputui.domain.snapshot` names both).
"""

from __future__ import annotations

from collections.abc import Sequence

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext
from gputui.domain.findings_mig import no_instances_config
from gputui.domain.grace import clock, normal_until
from gputui.domain.model import ComingUp, NodeView, PipelineStage, StageStatus
from gputui.domain.thresholds import POLICY_CATCH_UP_SECONDS
from gputui.domain.upgrade_state import in_step

#: stage states that need no explanation
_SETTLED = frozenset({StageStatus.READY, StageStatus.DISABLED})
#: stage states that nothing explains: a failure, or what cannot be read
_UNEXPLAINED = frozenset({StageStatus.FAILED, StageStatus.UNKNOWN})
#: node names listed per activity in the ClusterPolicy's message
_NAMES_SHOWN = 3


def is_gpu_node(node: NodeView) -> bool:
    """NFD or the operator says the node has an NVIDIA GPU (``gpu.count`` may not be set)."""
    return node.gpu_present or any(node.labels.get(key) == "true" for key in L.NFD_GPU_LABELS)


def waiting_stages(node: NodeView) -> tuple[PipelineStage, ...]:
    """The node's stages that are neither ready nor disabled."""
    return tuple(s for s in node.pipeline.stages if s.status not in _SETTLED)


def judge(ctx: NodeContext) -> ComingUp | None:
    """The node is coming up within its grace: what it does and until when that is normal.

    None when it is settled, fails, is past a grace, is in an active driver upgrade, or its
    inputs are unknown. The deadline joins ``ctx.deadlines`` so the node is judged again
    when it passes.
    """
    node = ctx.node
    if not is_gpu_node(node) or node.unknown or node.loading:
        return None
    if not node.ready:
        return _not_ready(ctx)
    if in_step(node.upgrade_state):
        return None  # taken by the upgrade controller on purpose: the upgrade explains it
    if no_instances_config(ctx) is not None:
        return None  # the validator never passes: mig-no-instances says why
    waiting = waiting_stages(node)
    if not waiting:
        return _just_ready(ctx)
    if any(s.status in _UNEXPLAINED for s in waiting):
        return None
    deadlines = [_deadline(ctx, stage) for stage in waiting]
    known = [d for d in deadlines if d is not None and d > ctx.now]
    if len(known) != len(deadlines):
        return None
    until = min(known)
    ctx.deadlines.append(until)
    return ComingUp(_what(node, node.pipeline.first_broken() or waiting[0]), until)


def _arrived(ctx: NodeContext) -> float | None:
    """When the node last arrived: its creation, or its last return to Ready."""
    return max(filter(None, (ctx.node.created, ctx.ready_since)), default=None)


def _not_ready(ctx: NodeContext) -> ComingUp | None:
    """NotReady within Kubernetes' not-ready toleration: registering or rebooting."""
    since = _arrived(ctx)
    if since is None:
        return None
    until = since + 60.0 * ctx.thresholds.node_not_ready_minutes
    if until <= ctx.now:
        return None
    ctx.deadlines.append(until)
    return ComingUp("NotReady", until)


def _just_ready(ctx: NodeContext) -> ComingUp | None:
    """Every stage is ready, the last of them moments ago: the ClusterPolicy may still say
    notReady until the operator re-checks (:data:`POLICY_CATCH_UP_SECONDS`)."""
    names = {s.pod for s in ctx.node.pipeline.stages if s.pod is not None}
    latest = 0.0
    for pod in ctx.pods:
        if pod.name in names:
            for c in pod.containers:
                latest = max(latest, c.started_at or 0.0)
            for c in pod.init_containers:
                latest = max(latest, c.finished_at or 0.0)
    if latest + POLICY_CATCH_UP_SECONDS <= ctx.now:
        return None
    until = latest + POLICY_CATCH_UP_SECONDS
    ctx.deadlines.append(until)
    return ComingUp("operands ready moments ago", until)


def _deadline(ctx: NodeContext, stage: PipelineStage) -> float | None:
    """Until when ``stage`` not being ready is normal (None: nothing says it is)."""
    node = ctx.node
    if stage.status is StageStatus.PAUSED:
        return _paused_until(ctx)
    until = (normal_until(node.pipeline, stage, ctx.pods, ctx.thresholds)
             if stage.status is StageStatus.PROGRESSING else None)
    if until is None:  # not scheduled yet (no pod), or a pod without a start time
        arrived = _arrived(ctx)
        until = (arrived + 60.0 * ctx.thresholds.driver_startup_minutes
                 if arrived is not None else None)
    return until


def _paused_until(ctx: NodeContext) -> float | None:
    """A paused operand is normal while the MIG change or the driver reload that paused it
    runs within its own grace (mig-manager and k8s-driver-manager restore the labels)."""
    node = ctx.node
    if node.mig_state in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING):
        return (node.mig_since + 60.0 * ctx.thresholds.mig_pending_minutes
                if node.mig_since is not None else None)
    driver = node.pipeline.stage("driver")
    if driver is None or driver.status is not StageStatus.PROGRESSING:
        return None
    return normal_until(node.pipeline, driver, ctx.pods, ctx.thresholds)


def _what(node: NodeView, stage: PipelineStage) -> str:
    """What the stage holding the node up is doing, in a few words."""
    if stage.status is StageStatus.ABSENT:
        return f"{stage.operand} not scheduled yet"
    if stage.status is StageStatus.PAUSED:
        busy = node.mig_state in (L.MIG_STATE_PENDING, L.MIG_STATE_REBOOTING)
        return f"MIG change to {node.mig_config}" if busy else "driver reloading"
    if stage.operand == "driver":
        return "driver compiling" if stage.container == "nvidia-driver-ctr" else "driver starting"
    return f"{stage.operand} starting"


def unsettled(node: NodeView) -> bool:
    """A GPU node whose pipeline is not ready (or which is NotReady) and that nothing
    explains: not coming up within its grace and not taken by a driver upgrade."""
    if node.coming_up is not None or node.loading or not is_gpu_node(node):
        return False
    if in_step(node.upgrade_state):
        return False
    return not node.ready or bool(waiting_stages(node))


#: node findings that explain the node's pipeline not being ready, so a ClusterPolicy's
#: notReady is blamed on them (a symptom, said once on the node). ``slow-gpu-join`` too: a
#: join past its pool's usual time whose driver is still inside its startup probe keeps
#: ``state-driver`` notReady (gpu-operator ``controllers/object_controls.go``,
#: ``isDaemonSetReady``), and the operator should read one warning, the join's
POLICY_CAUSES = frozenset({C.MIG_NO_INSTANCES, C.SLOW_GPU_JOIN})


def blamed_on(node: NodeView) -> str:
    """The cause code that explains ``node`` not being ready, when every warning or worse
    on it is that cause; "" otherwise."""
    serious = {f.code for f in node.findings if f.severity.rank >= 2}
    return next(iter(serious)) if len(serious) == 1 and serious <= POLICY_CAUSES else ""


class ComingUpTracker:
    """The nodes coming up, those not ready because of a cause finding of their own, and
    those not ready without a reason, kept by difference (each build hands over only the
    views that changed, as to :class:`~gputui.domain.fleet.Fleet`)."""

    def __init__(self) -> None:
        self._coming: dict[str, ComingUp] = {}
        self._unsettled: set[str] = set()
        self._blamed: dict[str, str] = {}

    def fork(self) -> ComingUpTracker:
        """An independent copy sharing the (immutable) values."""
        other = ComingUpTracker()
        other._coming, other._unsettled = dict(self._coming), set(self._unsettled)
        other._blamed = dict(self._blamed)
        return other

    def put(self, name: str, view: NodeView | None) -> None:
        """Node ``name`` now looks like ``view`` (None: it is gone)."""
        self._coming.pop(name, None)
        self._unsettled.discard(name)
        self._blamed.pop(name, None)
        if view is None:
            return
        if view.coming_up is None and not unsettled(view):
            return
        cause = blamed_on(view)  # a cause finding explains even a node within its grace
        if cause:
            self._blamed[name] = cause
        elif view.coming_up is not None:
            self._coming[name] = view.coming_up
        else:
            self._unsettled.add(name)

    @property
    def unsettled(self) -> frozenset[str]:
        """Nodes not ready that nothing explains."""
        return frozenset(self._unsettled)

    @property
    def blamed(self) -> frozenset[str]:
        """Nodes not ready because of a cause finding of their own (:data:`POLICY_CAUSES`)."""
        return frozenset(self._blamed)

    def blame(self) -> str:
        """E.g. "mig-no-instances on a, b", or "" when no node is blamed."""
        groups: dict[str, list[str]] = {}
        for name in sorted(self._blamed):
            groups.setdefault(self._blamed[name], []).append(name)
        return "; ".join(f"{code} on {_names(names)}" for code, names in groups.items())

    def phrase(self) -> str:
        """E.g. "2 nodes come up within their grace (driver compiling on a, b); normal until
        10:21 UTC", or "" when no node is coming up."""
        if not self._coming:
            return ""
        groups: dict[str, list[str]] = {}
        for name in sorted(self._coming):
            groups.setdefault(self._coming[name].what, []).append(name)
        doing = "; ".join(f"{what} on {_names(names)}" for what, names in groups.items())
        count = len(self._coming)
        nodes = ("1 node comes up within its" if count == 1
                 else f"{count} nodes come up within their")
        until = max(c.until for c in self._coming.values())
        return f"{nodes} grace ({doing}); normal until {clock(until)}"


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")
