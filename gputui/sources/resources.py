"""What gputui lists and watches: one :class:`Feed` per stream, with its reducer and key.

Feeds are data, so the live cache, the one-shot ``check`` read and the tests share one
definition of "the objects gputui needs" (ARCHITECTURE.md, "Data flow" step 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gputui.domain.labels import NFD_GPU_LABELS
from gputui.domain.pods import PodInfo
from gputui.domain.readgaps import FORBIDDEN
from gputui.sources.decode import gpu_pod_reducer, reduce_node, reduce_operator_pod
from gputui.sources.reduce import (
    JsonObj,
    LabelTimes,
    reduce_budget,
    reduce_configmap,
    reduce_event,
    reduce_plain,
)

Key = tuple[str, str]  # (namespace or "", name)
Reducer = Callable[[Mapping[str, Any]], "tuple[JsonObj, LabelTimes] | None"]

GPU_PRESENT = "nvidia.com/gpu.present=true"
#: nodes NFD saw an NVIDIA GPU on that the operator has not labelled: operator down, a new
#: node, or NFD labels it does not act on. One feed per NFD label the operator reads (§1.4):
#: a label selector cannot OR, and each of these returns only the unmanaged GPU nodes (none,
#: usually), so at 5,000 nodes the managed ones are never sent twice and the cluster's CPU
#: nodes are never sent at all, unlike a watch on every node.
NFD_FEEDS = tuple(
    (f"nodes-nfd{suffix}", f"{label}=true,nvidia.com/gpu.present!=true")
    for suffix, label in (("", NFD_GPU_LABELS[0]), ("-0302", NFD_GPU_LABELS[1]),
                          ("-0300", NFD_GPU_LABELS[2])))
NFD_ONLY = NFD_FEEDS[0][1]
LIVE_PHASES = "status.phase!=Succeeded,status.phase!=Failed"
UPGRADE_EVENTS = "involvedObject.kind=Node,reason=GPUDriverUpgrade"
#: the DaemonSet controller's "Error creating: ..." in the operator namespace: evidence that
#: a driver DaemonSet short of pods stays so (``upgrade-blocked``)
FAILED_CREATE_EVENTS = "involvedObject.kind=DaemonSet,reason=FailedCreate"


@dataclass(frozen=True)
class Feed:
    """One list+watch stream.

    Attributes:
        name: cache slot and the name shown when it is forbidden (``nodes``, ``events`` ...).
        path: collection URL path.
        label_selector / field_selector: server-side filters.
        reduce: shrinks each object on arrival; ``None`` drops it (client-side filter).
        optional: a 404 means "not installed here" (a CRD), an empty collection, no error.
        namespaced: depends on the operator namespace (restarted when it changes).
    """

    name: str
    path: str
    reduce: Reducer
    label_selector: str | None = None
    field_selector: str | None = None
    optional: bool = False
    namespaced: bool = False

    def query(self) -> dict[str, str]:
        query: dict[str, str] = {}
        if self.label_selector:
            query["labelSelector"] = self.label_selector
        if self.field_selector:
            query["fieldSelector"] = self.field_selector
        return query


#: feeds that read the same resource as another are reported under the resource's name
_RESOURCE_OF_FEED = {**{name: "nodes" for name, _ in NFD_FEEDS}, "gpu-pods": "pods"}


def resource_of(feed_name: str) -> str:
    """The resource a feed reads, as named in ``forbidden`` (``gpu-pods`` -> ``pods``)."""
    return _RESOURCE_OF_FEED.get(feed_name, feed_name)


#: the GPU workload pods (all namespaces) are a gap of their own: a viewer with a Role in the
#: operator namespace reads the operand pods (the pipelines) but not every pod
_GAP_OF_FEED = {**_RESOURCE_OF_FEED, "gpu-pods": "gpu-pods"}


def unreadable_resources(found: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(feed name, reason) pairs as resource -> reason, what the snapshot carries.

    A 403 on any feed of a resource wins over a 404; ``gpu-pods`` is left out when ``pods``
    is forbidden too (the operand pods' gap already covers every pod).
    """
    result: dict[str, str] = {}
    for feed_name, reason in found:
        resource = _GAP_OF_FEED.get(feed_name, feed_name)
        if result.get(resource) != FORBIDDEN:
            result[resource] = reason
    if result.get("pods") == FORBIDDEN:
        result.pop("gpu-pods", None)
    return result


def object_key(obj: PodInfo | Mapping[str, Any]) -> Key:
    """(namespace, name) of a cached object: a reduced dict or a read pod."""
    if isinstance(obj, PodInfo):
        return (obj.namespace, obj.name)
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


#: every PodDisruptionBudget: which one held a pod a driver upgrade's drain could not evict
#: (optional: a 403 or a 404 is a read gap, ``readgaps.REACH``, and no finding rests on it)
BUDGETS_PATH = "/apis/policy/v1/poddisruptionbudgets"


def cluster_feeds() -> list[Feed]:
    """Feeds that do not depend on the operator namespace: GPU nodes, CRs, upgrade events,
    disruption budgets."""
    return [
        Feed("nodes", "/api/v1/nodes", reduce_node, label_selector=GPU_PRESENT),
        *(Feed(name, "/api/v1/nodes", reduce_node, label_selector=selector)
          for name, selector in NFD_FEEDS),
        Feed("clusterpolicies", "/apis/nvidia.com/v1/clusterpolicies", reduce_plain,
             optional=True),
        Feed("nvidiadrivers", "/apis/nvidia.com/v1alpha1/nvidiadrivers", reduce_plain,
             optional=True),
        Feed("events", "/api/v1/events", reduce_event, field_selector=UPGRADE_EVENTS),
        Feed("poddisruptionbudgets", BUDGETS_PATH, reduce_budget, optional=True),
    ]


def namespace_feeds(namespace: str | None, wait: tuple[str, ...] = ()) -> list[Feed]:
    """Feeds that follow the operator namespace (restarted when it is found or moves).

    GPU workload pods are read cluster-wide but *outside* the operator namespace when it
    is known: the operand pods there (tens of thousands at 5,000 nodes) come through their
    own feed, and reading them twice would double the biggest transfer. Pods matching a
    ``waitForCompletion`` selector (``wait``) are kept too, GPU or not: the upgrade
    controller waits for every one of them.
    """
    phases = LIVE_PHASES + (f",metadata.namespace!={namespace}" if namespace else "")
    feeds = [Feed("gpu-pods", "/api/v1/pods", gpu_pod_reducer(wait), field_selector=phases,
                  namespaced=True)]
    if not namespace:
        return feeds
    base = f"/namespaces/{namespace}"
    return feeds + [
        Feed("pods", f"/api/v1{base}/pods", reduce_operator_pod, namespaced=True),
        Feed("daemonsets", f"/apis/apps/v1{base}/daemonsets", reduce_plain, namespaced=True),
        Feed("configmaps", f"/api/v1{base}/configmaps", reduce_configmap, namespaced=True),
        Feed("daemonset-events", f"/api/v1{base}/events", reduce_event,
             field_selector=FAILED_CREATE_EVENTS, namespaced=True),
    ]
