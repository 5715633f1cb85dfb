"""A node's operand pipeline: one stage per operand, in readiness-chain order (§1.2/§1.3).

A stage's status comes first from the node's deploy label (``false`` → disabled, a paused
value → paused), then from the operand's pod on that node (matched by ``app`` label and
``spec.nodeName``). The detail names the container, the reason and the restarts, because
"which container, why, how often" is the first thing an operator asks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from gputui.domain.fastinit import maker
from gputui.domain.labels import DEPLOY_OPERANDS, MPS_CAPABLE, is_paused, label_true
from gputui.domain.model import NodePipeline, PipelineStage, StageStatus, SubStage
from gputui.domain.operands import OPERANDS, Operand, operand_for_labels
from gputui.domain.pods import ContainerInfo, PodInfo

_substage = maker(SubStage)
_stage = maker(PipelineStage)

#: operands expected for reasons other than a deploy label (see :func:`_expected`)
_SPECIAL = frozenset({"mps-control-daemon", "mig-manager"})


def _restarts(count: int) -> str:
    return f"{count} restart" + ("" if count == 1 else "s")


def _retry_words(container: ContainerInfo) -> str:
    """``running again after 3 restarts (last exit 1)``: a crash loop between back-offs."""
    return (f"running again after {_restarts(container.restarts)} "
            f"(last exit {container.exit_code})")


def substage(container: ContainerInfo, reached: bool) -> SubStage:
    """An init container as a sub-stage; ``absent`` means not reached yet."""
    if container.done:
        return _substage(container.name, StageStatus.READY, "", container.restarts)
    if container.failing:
        reason = container.reason or "Error"
        return _substage(container.name, StageStatus.FAILED,
                        f"{reason}, {_restarts(container.restarts)}", container.restarts)
    if container.retrying:
        return _substage(container.name, StageStatus.FAILED, _retry_words(container),
                         container.restarts)
    if reached:
        return _substage(container.name, StageStatus.PROGRESSING, "running", container.restarts)
    return _substage(container.name, StageStatus.ABSENT, "not started", container.restarts)


def _substages(pod: PodInfo, current: ContainerInfo | None) -> tuple[SubStage, ...]:
    """The pod's init containers as sub-stages (``current``: its first not done)."""
    result = []
    reached = True
    for container in pod.init_containers:
        result.append(substage(container, reached))
        if container is current:
            reached = False
    return tuple(result)


def _pod_status(pod: PodInfo,
                current: ContainerInfo | None) -> tuple[StageStatus, str, str | None]:
    """Status, detail and the container the detail is about, from the pod alone (``current``
    is its :meth:`~PodInfo.current_init`, read once for this and its sub-stages)."""
    failing = pod.failing_container()
    if pod.deleting:
        return StageStatus.PROGRESSING, "terminating", None
    if failing is not None:
        where = "init container " if failing.init and not pod.status.startswith("Init:") else ""
        detail = f"{pod.status} in {where}{failing.name}, {_restarts(failing.restarts)}"
        return StageStatus.FAILED, detail, failing.name
    retrying = pod.retrying_container()
    if retrying is not None:
        where = "init container " if retrying.init else ""
        return StageStatus.FAILED, f"{where}{retrying.name} {_retry_words(retrying)}", \
            retrying.name
    if pod.phase == "Failed":
        return StageStatus.FAILED, f"pod Failed: {pod.status}", None
    if pod.unschedulable:
        return StageStatus.PROGRESSING, f"Pending, not scheduled: {pod.unschedulable}", None
    if current is not None:
        return StageStatus.PROGRESSING, f"waiting in init container {current.name}", current.name
    if pod.ready:
        return StageStatus.READY, "", None
    for container in pod.containers:
        if not container.ready:
            state = container.reason or container.state
            return StageStatus.PROGRESSING, f"{container.name} not ready ({state})", container.name
    return StageStatus.PROGRESSING, pod.status, None


def stage_from_pod(operand: str, pod: PodInfo, deploy_label: str | None) -> PipelineStage:
    """The stage of ``operand`` given its pod on the node."""
    current = pod.current_init()
    status, detail, container = _pod_status(pod, current)
    named = next((c.restarts for c in (*pod.init_containers, *pod.containers)
                  if c.name == container), None) if container is not None else None
    return _stage(
        operand=operand, status=status, detail=detail, pod=pod.name, namespace=pod.namespace,
        restarts=pod.restarts, container=container, reason=pod.status,
        since=pod.start_time or pod.created, substages=_substages(pod, current),
        deploy_label=deploy_label, container_restarts=named)


def _pick(pods: Sequence[PodInfo]) -> PodInfo | None:
    """The pod that speaks for the operand: a live one over a terminating one, newest first."""
    if not pods:
        return None
    if len(pods) == 1:  # the common case: one pod per operand and node
        return pods[0]
    return max(pods, key=lambda p: (not p.deleting, p.created or 0.0))


def operand_pods(pods: Sequence[PodInfo]) -> dict[str, list[PodInfo]]:
    """The node's operand pods grouped by operand name."""
    grouped: dict[str, list[PodInfo]] = {}
    for pod in pods:
        operand = operand_for_labels(pod.labels)
        if operand is not None:
            grouped.setdefault(operand.name, []).append(pod)
    return grouped


def _label_stage(operand: Operand, value: str | None, operands_off: bool,
                 disabled: Collection[str]) -> PipelineStage | None:
    """A stage decided by labels or policy alone (disabled/paused), or None."""
    if operands_off:
        return PipelineStage(operand.name, StageStatus.DISABLED,
                             f"{DEPLOY_OPERANDS}=false", deploy_label=value)
    if value is not None and value.lower() == "false":
        detail = ("host driver (nvidia.com/gpu.deploy.driver=false)" if operand.name == "driver"
                  else f"{operand.deploy}=false")
        return PipelineStage(operand.name, StageStatus.DISABLED, detail, deploy_label=value)
    if operand.name in disabled:
        return PipelineStage(operand.name, StageStatus.DISABLED, "disabled in ClusterPolicy",
                             deploy_label=value)
    if value is not None and is_paused(value):
        return PipelineStage(operand.name, StageStatus.PAUSED, f"{operand.deploy}={value}",
                             deploy_label=value)
    return None


def _expected(operand: Operand, value: str | None, policy_present: bool,
              with_daemonset: Collection[str], mig_capable: bool, mps_capable: bool) -> bool:
    """Whether a missing pod is a problem (``absent``) rather than just not part of the node."""
    if operand.name == "mps-control-daemon":
        return mps_capable and operand.name in with_daemonset
    if operand.name == "mig-manager":
        return mig_capable and (operand.name in with_daemonset or value is not None)
    if operand.core:
        return policy_present
    return value is not None and operand.name in with_daemonset


def _unknown_stage(operand: Operand, value: str | None, unknown: Collection[str]) -> PipelineStage:
    """A stage whose pod, or whether the node should run it, could not be read."""
    what = "pods" if "pods" in unknown else ", ".join(sorted(unknown))
    return PipelineStage(operand.name, StageStatus.UNKNOWN,
                         f"unknown: {what} cannot be read", deploy_label=value)


def build_pipeline(labels: Mapping[str, str], pods: Sequence[PodInfo], *,
                   policy_present: bool, disabled: Collection[str] = (),
                   with_daemonset: Collection[str] = (),
                   mig_capable: bool = False, unknown: Collection[str] = (),
                   grouped: Mapping[str, Sequence[PodInfo]] | None = None) -> NodePipeline:
    """The node's pipeline.

    Args:
        labels: the node's labels.
        pods: operand pods scheduled on the node (any namespace; matched by labels).
        policy_present: a ClusterPolicy exists, so the core operands are expected.
        disabled: operand names the ClusterPolicy disables.
        with_daemonset: operand names that have a DaemonSet in the operator namespace.
        mig_capable: the node is MIG-capable (mig-manager expected).
        unknown: inputs that could not be read (``pods``, ``daemonsets``,
            ``clusterpolicies``): a stage without a pod that rests on them is ``unknown``,
            never ``absent`` (a missing pod is only a fault when gputui could see pods).
        grouped: ``operand_pods(pods)`` when the caller has it already (a node's build
            groups its pods once for the pipeline and the join); None: grouped here.
    """
    if grouped is None:
        grouped = operand_pods(pods)
    operands_off = labels.get(DEPLOY_OPERANDS, "").lower() == "false"
    mps_capable = label_true(labels, MPS_CAPABLE)
    # what might be expected if the unreadable policy and DaemonSets allowed it
    maybe_policy = policy_present or "clusterpolicies" in unknown
    maybe_sets = (frozenset(o.name for o in OPERANDS) if "daemonsets" in unknown
                  else with_daemonset)
    stages: list[PipelineStage] = []
    for operand in OPERANDS:
        value = labels.get(operand.deploy) or None
        pod = _pick(grouped.get(operand.name, ()))
        if value is None and pod is None and not operand.core and operand.name not in _SPECIAL:
            continue  # nothing asks for it and nothing runs: no stage (most of the catalogue)
        fixed = _label_stage(operand, value, operands_off, disabled)
        expected = _expected(operand, value, policy_present, with_daemonset, mig_capable,
                             mps_capable)
        maybe = expected or (bool(unknown) and _expected(
            operand, value, maybe_policy, maybe_sets, mig_capable, mps_capable))
        if fixed is not None:
            if operand.core or pod is not None or expected:
                stages.append(fixed)
        elif pod is not None:
            stages.append(stage_from_pod(operand.name, pod, value))
        elif maybe and ("pods" in unknown or not expected):
            stages.append(_unknown_stage(operand, value, unknown))
        elif expected:
            why = "no pod on this node" if value else f"no pod: {operand.deploy} not set"
            stages.append(PipelineStage(operand.name, StageStatus.ABSENT, why,
                                        deploy_label=value))
    return NodePipeline(tuple(stages))
