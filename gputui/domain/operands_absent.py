"""A GPU node where the operator runs no operand pod at all, and the likely reason.

The operator labels a GPU node (``nvidia.com/gpu.present=true``, from NFD's PCI labels) and
its DaemonSets select it with ``nvidia.com/gpu.deploy.<operand>=true``; the DaemonSet
controller then makes a pod there unless a ``NoSchedule``/``NoExecute`` taint is not
tolerated (kubernetes ``pkg/controller/daemon/daemon_controller.go`` ``NodeShouldRunDaemonPod``
checks the pod's tolerations against the node's taints). A node left out that way is
counted in no DaemonSet's ``desiredNumberScheduled``, so no rollout number, no ClusterPolicy
state and no other finding shows it: the node just never gets a driver or a device plugin.
``gpu-node-unmanaged`` then names the cause: an untolerated taint, ``deploy.*=false``
labels, or deploy labels not ``true`` (the DaemonSets' nodeSelector).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain import catalogue as C
from gputui.domain import kube
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext
from gputui.domain.inputs import JsonDict
from gputui.domain.model import Finding
from gputui.domain.operands import operand_for_daemonset

#: (key, operator, value, effect) of a pod toleration
Toleration = tuple[str, str, str, str]
#: (key, value, effect) of a node taint
Taint = tuple[str, str, str]

#: what the DaemonSet controller adds to every daemon pod (kubernetes
#: ``pkg/controller/daemon/util/daemonset_util.go`` ``AddOrUpdateDaemonPodTolerations``)
DAEMON_TOLERATIONS: tuple[Toleration, ...] = (
    ("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
    ("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
    ("node.kubernetes.io/network-unavailable", "Exists", "", "NoSchedule"),
)
_BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def operand_tolerations(daemonsets: Mapping[str, JsonDict]) -> tuple[Toleration, ...] | None:
    """The tolerations the operand pods carry (every operand DaemonSet's template, plus the
    DaemonSet controller's own), or None when no operand DaemonSet is seen."""
    found: set[Toleration] = set()
    seen = False
    for name in sorted(daemonsets):
        ds = daemonsets[name]
        if operand_for_daemonset(name, kube.labels_of(ds)) is None:
            continue
        seen = True
        spec = kube.sub(ds, "spec", "template", "spec")
        for entry in spec.get("tolerations") or []:
            if isinstance(entry, Mapping):
                found.add((str(entry.get("key") or ""), str(entry.get("operator") or "Equal"),
                           str(entry.get("value") or ""), str(entry.get("effect") or "")))
    return tuple(sorted(found | set(DAEMON_TOLERATIONS))) if seen else None


def _tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' ``Toleration.ToleratesTaint``: an empty effect matches every effect, an
    empty key with ``Exists`` matches every taint, ``Exists`` ignores the value."""
    key, operator, value, effect = toleration
    if effect and effect != taint[2]:
        return False
    if key and key != taint[0]:
        return False
    if operator == "Exists":
        return True
    return bool(key) and value == taint[1]


def untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> list[Taint]:
    """The node's NoSchedule/NoExecute taints that no operand toleration matches."""
    return [t for t in taints if t[2] in _BLOCKING
            and not any(_tolerates(tol, t) for tol in tolerations)]


def _cause(ctx: NodeContext, tolerations: Sequence[Toleration]) -> tuple[str, str]:
    """(why, what to do) for a GPU node that got no operand pod."""
    node = ctx.node
    taints = untolerated(node.taints, tolerations)
    if taints:
        shown = ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in taints)
        return (f"untolerated taint {shown}",
                "Add a matching toleration to the ClusterPolicy (daemonsets.tolerations) or "
                f"remove the taint (kubectl taint node {node.name} {taints[0][0]}-).")
    off = [d.operand for d in node.deploy_labels if d.value.lower() == "false"]
    if off:
        return (f"{', '.join(f'{L.DEPLOY_PREFIX}{o}' for o in off)}=false",
                "Set the labels back to true (or remove them: the operator sets them) if the "
                "node should run the GPU stack.")
    return (f"no {L.DEPLOY_PREFIX}* label is true, so the operand DaemonSets' nodeSelector "
            "does not match", "Check the operator's log: it sets the deploy labels on every "
            "node with nvidia.com/gpu.present=true.")


def operands_absent(ctx: NodeContext) -> list[Finding]:
    """A GPU node (NFD sees an NVIDIA PCI device, the operator labelled it) with no operand
    pod at all past the operand grace: the operator manages it in name only."""
    node = ctx.node
    if ctx.tolerations is None or not node.gpu_present or node.unknown:
        return []
    if not any(node.labels.get(key) == "true" for key in L.NFD_GPU_LABELS):
        return []
    if node.labels.get(L.DEPLOY_OPERANDS, "").lower() == "false":
        return []  # opted out on purpose: gpu_node_unmanaged says so
    stages = node.pipeline.stages
    if not stages or any(s.pod is not None for s in stages):
        return []
    if not ctx.over(node.created, ctx.thresholds.operand_not_ready_minutes):
        return []
    why, hint = _cause(ctx, ctx.tolerations)
    return [ctx.finding(
        C.GPU_NODE_UNMANAGED,
        f"{node.name} has an NVIDIA GPU and {L.GPU_PRESENT}=true but runs no GPU Operator "
        f"pod (no driver, no device plugin): {why}", hint)]
