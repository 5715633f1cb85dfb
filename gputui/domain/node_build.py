"""Building one :class:`NodeView`: Node object + its pods → facts, pipeline, findings."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gputui.domain import labels as L
from gputui.domain import nodes as N
from gputui.domain.coming_up import is_gpu_node, judge
from gputui.domain.disruption import HeldBudgets
from gputui.domain.fastinit import maker
from gputui.domain.findings import NodeContext, node_findings
from gputui.domain.inputs import JsonDict
from gputui.domain.joins import node_join
from gputui.domain.mig import MigSpec
from gputui.domain.model import NodePipeline, NodeView, UpgradeEvent, UpgradePolicy
from gputui.domain.pipeline import build_pipeline, operand_pods
from gputui.domain.pods import PodInfo
from gputui.domain.thresholds import ThresholdsLike

_node_view = maker(NodeView)


@dataclass(frozen=True, slots=True)
class NodeInputs:
    """Everything one node's view depends on."""

    node: JsonDict
    pods: Sequence[PodInfo]
    label_times: Mapping[str, float] = field(default_factory=dict)
    policy_present: bool = True
    disabled: Collection[str] = ()
    with_daemonset: Collection[str] = ()
    upgrade_policy: UpgradePolicy | None = None
    event: UpgradeEvent | None = None
    #: driver DaemonSet -> its current controller-revision-hash (where it can be told)
    driver_revisions: Mapping[str, str] = field(default_factory=dict)
    #: (ConfigMap name, config names it offers) when the node asks for a MIG config
    mig_configs: tuple[str, tuple[str, ...]] | None = None
    #: what each of those configs does, by name
    mig_specs: Mapping[str, tuple[MigSpec, ...]] | None = None
    #: (ConfigMap name, its keys) when the node names a device-plugin config
    sharing_configs: tuple[str, tuple[str, ...]] | None = None
    #: the pod lists (or policy, DaemonSets) are not read yet: no pipeline, no findings
    loading: bool = False
    #: those of them that could not be read (403): what rests on them is unknown
    unknown: tuple[str, ...] = ()
    #: when gputui saw the node's GPUs become allocatable while it watched (None: it did not)
    observed_allocatable: float | None = None
    #: the tolerations operand pods carry (None: no operand DaemonSet seen)
    tolerations: tuple[tuple[str, str, str, str], ...] | None = None
    #: what the budgets say about the pod its drain could not evict (None: no such pod)
    budgets: HeldBudgets | None = None
    #: ``node`` as :func:`~gputui.domain.nodes.read_basics` reads it, when the caller has
    #: read it already (the snapshot builder does, for its allocatable observer); None:
    #: read here
    basics: N.NodeBasics | None = None


def join_to_allocatable(created: float | None, pods: Sequence[PodInfo],
                        allocatable: int) -> float | None:
    """Seconds from node creation to GPUs allocatable: when the validator's
    ``plugin-validation`` finished (it waits for capacity), if the pod saw it."""
    if created is None or allocatable <= 0:
        return None
    for pod in pods:
        for init in pod.init_containers:
            if init.name == "plugin-validation" and init.done and init.finished_at:
                return max(0.0, init.finished_at - created)
    return None


def driver_outdated(pods: Sequence[PodInfo], revisions: Mapping[str, str]) -> bool | None:
    """Whether the node's driver pod carries another ``controller-revision-hash`` than its
    DaemonSet's current revision (``podInSyncWithDS``); None when that cannot be told."""
    for pod in pods:
        current = revisions.get(pod.owner_name) if pod.owner_kind == "DaemonSet" else None
        made = pod.labels.get(L.REVISION_HASH, "")
        if current is not None and made:
            return made != current
    return None


def _gpu_count(labels: Mapping[str, str]) -> int:
    value = labels.get(L.GPU_COUNT, "0")
    return int(value) if value.isdigit() else 0


def _base_fields(inputs: NodeInputs, basics: N.NodeBasics, pods: Sequence[PodInfo],
                 grouped: Mapping[str, Sequence[PodInfo]], pool_label: str = "") -> dict[str, Any]:
    """Every :class:`NodeView` field but findings and worst, as keyword arguments (the view
    is made twice, without and with findings: cheaper than ``dataclasses.replace``);
    ``grouped`` is ``operand_pods(pods)``."""
    labels = basics.labels
    strategy, replicas = N.sharing(labels)
    capable = N.mig_capable(labels)
    return {
        "name": basics.name, "pool": N.pool_of(labels, pool_label), "product": labels.get(L.GPU_PRODUCT, ""),
        "gpu_count": _gpu_count(labels),
        "resources": basics.resources, "driver_version": N.driver_version(labels),
        "kernel": basics.kernel, "os_image": basics.os_image, "ready": basics.ready,
        "cordoned": basics.cordoned, "gpu_present": L.label_true(labels, L.GPU_PRESENT),
        "labels": labels, "deploy_labels": N.deploy_labels(labels),
        "driver_ownership": N.driver_ownership(labels),
        "driver_owner_cr": labels.get(L.DRIVER_OWNER) or None,
        "driver_outdated": driver_outdated(pods, inputs.driver_revisions),
        "upgrade_state": labels.get(L.UPGRADE_STATE, ""),
        "upgrade_since": inputs.label_times.get(L.UPGRADE_STATE),
        "upgrade_skip": L.label_true(labels, L.UPGRADE_SKIP),
        "upgrade_annotations": N.upgrade_annotations(basics.annotations),
        "mig_capable": capable, "mig_config": labels.get(L.MIG_CONFIG) or None,
        "mig_state": labels.get(L.MIG_CONFIG_STATE) or None,
        "mig_strategy": labels.get(L.MIG_STRATEGY) or None,
        "mig_since": inputs.label_times.get(L.MIG_CONFIG_STATE)
        or inputs.label_times.get(L.MIG_CONFIG),
        "sharing_strategy": strategy, "sharing_replicas": replicas,
        "device_plugin_config": labels.get(L.DEVICE_PLUGIN_CONFIG) or None,
        "gpu_pods": N.gpu_pods(pods), "created": basics.created, "taints": basics.taints,
        "wait_pods": N.wait_pods(pods, inputs.upgrade_policy.wait_for_completion_selector
                                 if inputs.upgrade_policy is not None else ""),
        "join_to_allocatable_seconds": join_to_allocatable(
            basics.created, pods, basics.resources.allocatable),
        "pipeline": NodePipeline() if inputs.loading else build_pipeline(
            labels, pods, policy_present=inputs.policy_present, disabled=inputs.disabled,
            with_daemonset=inputs.with_daemonset, mig_capable=capable, unknown=inputs.unknown,
            grouped=grouped),
        "unknown": inputs.unknown}


def build_node(inputs: NodeInputs, thresholds: ThresholdsLike,
               now: float) -> tuple[NodeView, float | None]:
    """The node's view and the next time a threshold may change its findings (or None)."""
    pods = inputs.pods
    basics = inputs.basics if inputs.basics is not None else N.read_basics(inputs.node)
    grouped = operand_pods(pods)  # once for the pipeline and the join
    fields = _base_fields(inputs, basics, pods, grouped, getattr(thresholds, "pool_label", ""))
    if inputs.loading:  # findings would rest on lists not read yet (see NodeView.loading)
        return _node_view(**fields, loading=True), None
    view = _node_view(**fields)
    if is_gpu_node(view) and not view.unknown:
        fields["join"] = node_join(basics.created, pods, basics.resources.allocatable,
                                   inputs.observed_allocatable, now, view.upgrade_state,
                                   view.gpu_count > 0, grouped=grouped)
    ctx = NodeContext(node=view, pods=pods, thresholds=thresholds, now=now,
                      label_times=MappingProxyType(dict(inputs.label_times)),
                      policy=inputs.upgrade_policy, event=inputs.event,
                      ready_reason=basics.ready_reason, ready_since=basics.ready_since,
                      mig_configs=inputs.mig_configs, mig_specs=inputs.mig_specs,
                      sharing_configs=inputs.sharing_configs, tolerations=inputs.tolerations,
                      budgets=inputs.budgets)
    findings = tuple(node_findings(ctx))
    worst = findings[0].severity if findings else None
    coming = judge(ctx)  # from the pipeline and age, not from the findings above
    recheck = min(ctx.deadlines) if ctx.deadlines else None
    return _node_view(**fields, findings=findings, worst=worst, coming_up=coming), recheck
