"""The node-local facts of a :class:`NodeView` (everything but pipeline and findings).

These come from the Node object alone plus the GPU pods on it, so the builder can reuse them
for nodes that did not change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gputui.domain import kube
from gputui.domain import labels as L
from gputui.domain.fastinit import maker
from gputui.domain.model import (
    DeployLabel,
    DriverOwnership,
    GpuPod,
    GpuResources,
    ResourceCount,
)
from gputui.domain.pods import PodInfo
from gputui.domain.selectors import parse_selector
from gputui.domain.sharing import sharing_of

_deploy_label = maker(DeployLabel)


@dataclass(frozen=True, slots=True)
class NodeBasics:
    """What the Node object says, read once."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    ready: bool
    ready_reason: str
    ready_since: float | None
    cordoned: bool
    created: float | None
    kernel: str
    os_image: str
    resources: GpuResources
    #: (key, value, effect) of each ``spec.taints`` entry
    taints: tuple[tuple[str, str, str], ...] = ()


def read_resources(node: Mapping[str, Any]) -> GpuResources:
    """GPU capacity/allocatable per resource name, sorted by name."""
    capacity = kube.sub(node, "status", "capacity")
    allocatable = kube.sub(node, "status", "allocatable")
    names = sorted(n for n in set(capacity) | set(allocatable) if L.is_gpu_resource(n))
    return GpuResources(tuple(ResourceCount(n, kube.to_int(capacity.get(n)),
                                            kube.to_int(allocatable.get(n))) for n in names))


def read_basics(node: Mapping[str, Any]) -> NodeBasics:
    """Read the parts of a Node the domain uses."""
    ready = kube.condition(node, "Ready")
    info = kube.sub(node, "status", "nodeInfo")
    labels = kube.labels_of(node)
    return NodeBasics(
        name=kube.name_of(node), labels=MappingProxyType(labels),
        annotations=MappingProxyType(kube.annotations_of(node)),
        ready=ready.get("status") == "True",
        ready_reason=str(ready.get("message") or ready.get("reason") or "no Ready condition"),
        ready_since=kube.parse_time(ready.get("lastTransitionTime")),
        cordoned=bool(kube.sub(node, "spec").get("unschedulable")),
        created=kube.parse_time(kube.sub(node, "metadata").get("creationTimestamp")),
        kernel=str(info.get("kernelVersion") or labels.get(L.NFD_KERNEL, "")),
        os_image=str(info.get("osImage", "")), resources=read_resources(node),
        taints=read_taints(node))


def read_taints(node: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """(key, value, effect) of the node's taints, in the order the Node lists them."""
    found = []
    for taint in kube.sub(node, "spec").get("taints") or []:
        if isinstance(taint, Mapping) and taint.get("key"):
            found.append((str(taint["key"]), str(taint.get("value") or ""),
                          str(taint.get("effect") or "")))
    return tuple(found)


def pool_of(labels: Mapping[str, str], pool_label: str = "") -> str:
    """The node's pool: the configured pool label if it carries it, else the first
    well-known pool label it carries (GKE, EKS, Karpenter, AKS...)."""
    if pool_label and labels.get(pool_label):
        return labels[pool_label]
    return next((labels[key] for key in L.POOL_LABELS if labels.get(key)), "")


def driver_version(labels: Mapping[str, str]) -> str:
    """The driver version GFD reports (full label, else joined parts)."""
    if labels.get(L.DRIVER_VERSION_FULL):
        return labels[L.DRIVER_VERSION_FULL]
    for keys in (L.DRIVER_VERSION_PARTS, L.DRIVER_VERSION_OLD_PARTS):
        parts = [labels.get(key, "") for key in keys]
        if parts[0]:
            return ".".join(p for p in parts if p)
    return ""


def deploy_labels(labels: Mapping[str, str]) -> tuple[DeployLabel, ...]:
    """Every ``nvidia.com/gpu.deploy.*`` label, sorted, with its paused flag."""
    prefix, cut, paused = L.DEPLOY_PREFIX, len(L.DEPLOY_PREFIX), L.PAUSED_VALUES
    keys = sorted([key for key in labels if key.startswith(prefix)])
    return tuple([_deploy_label(key[cut:], labels[key], labels[key].endswith(paused))
                  for key in keys])


def driver_ownership(labels: Mapping[str, str]) -> DriverOwnership:
    """Operator-managed (deploy.driver set, not false) vs host driver (deploy.driver=false)."""
    value = labels.get(L.DEPLOY_DRIVER)
    if value is None or value == "":
        return DriverOwnership.NONE
    return DriverOwnership.HOST if value.lower() == "false" else DriverOwnership.OPERATOR


def mig_capable(labels: Mapping[str, str]) -> bool:
    """MIG-capable per GFD, else per the operator's product fallback (§1.5)."""
    if L.MIG_CAPABLE in labels:
        return L.label_true(labels, L.MIG_CAPABLE)
    if labels.get(L.VGPU_HOST_DRIVER_VERSION):
        return False
    product = labels.get(L.GPU_PRODUCT, "").lower()
    return any(model in product for model in ("h100", "a100", "a30"))


def gpu_pods(pods: Sequence[PodInfo]) -> tuple[GpuPod, ...]:
    """The pods on the node that hold GPU resources, oldest first."""
    holders = [p for p in pods if p.gpus > 0 and p.phase not in ("Succeeded", "Failed")]
    holders.sort(key=lambda p: (p.start_time or p.created or 0.0, p.namespace, p.name))
    return tuple(GpuPod(name=p.name, namespace=p.namespace, phase=p.phase, gpus=p.gpus,
                        start_time=p.start_time or p.created, labels=p.labels,
                        resources=tuple(sorted(p.gpu_requests)), owner_kind=p.owner_kind,
                        owner_name=p.owner_name) for p in holders)


def wait_pods(pods: Sequence[PodInfo], selector: str) -> tuple[GpuPod, ...]:
    """The pods ``waitForCompletion`` waits for: every one its selector matches, GPU or
    not, oldest first. Upstream judges by phase alone (k8s-operator-libs
    ``pkg/upgrade/pod_manager.go``, ``ScheduleCheckOnPodCompletion``/``IsPodRunningOrPending``:
    Running or Pending hold the node, Succeeded and Failed do not), so a terminating pod
    (``deletionTimestamp`` set) still holds it until the kubelet reports its phase."""
    if not selector:
        return ()
    match = parse_selector(selector)
    chosen = [p for p in pods if p.phase in ("Running", "Pending") and match(p.labels)]
    chosen.sort(key=lambda p: (p.start_time or p.created or 0.0, p.namespace, p.name))
    return tuple(GpuPod(name=p.name, namespace=p.namespace, phase=p.phase, gpus=p.gpus,
                        start_time=p.start_time or p.created, labels=p.labels,
                        resources=tuple(sorted(p.gpu_requests)), deleting=p.deleting)
                 for p in chosen)


def upgrade_annotations(annotations: Mapping[str, str]) -> Mapping[str, str]:
    """The ``nvidia.com/gpu-driver-upgrade*`` annotations only."""
    return MappingProxyType({k: v for k, v in sorted(annotations.items())
                             if k.startswith(L.UPGRADE_ANNOTATION_PREFIX)})


def sharing(labels: Mapping[str, str]) -> tuple[str, int]:
    """Sharing strategy and replicas (see :mod:`gputui.domain.sharing`)."""
    return sharing_of(labels)
