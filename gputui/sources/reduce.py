"""Shrink Kubernetes objects on arrival to what gputui reads, keeping label-change times.

Why: at 5,000 nodes the raw lists are hundreds of megabytes, mostly ``managedFields``,
``status.images`` and pod spec detail gputui never shows. Each page is reduced before the
next is read, so memory follows what gputui keeps. ``managedFields`` are read once here for
the only thing they carry that nothing else does: when each node label last changed
(``nvidia.com/mig.config.state`` pending since when, upgrade state since when).

Every reducer returns a new dict (or ``None`` to drop the object) and never mutates its
argument's nested values that it keeps, so the caller may discard the raw page at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

JsonObj = dict[str, Any]
LabelTimes = dict[str, float]

#: resource-name prefixes that mean "this pod uses GPUs" (upgrade controller's filter)
GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-")

_POD_META_KEEP = ("name", "namespace", "uid", "resourceVersion", "labels",
                  "creationTimestamp", "deletionTimestamp")
_POD_STATUS_KEEP = ("phase", "reason", "message", "startTime")
_CONDITION_KEEP = ("type", "status", "reason", "message")
_CONTAINER_STATUS_KEEP = ("name", "ready", "started", "restartCount", "state", "lastState")
_EVENT_KEEP = ("involvedObject", "reason", "message", "type", "count", "firstTimestamp",
               "lastTimestamp", "eventTime", "source", "reportingComponent", "series")


def parse_time(text: Any) -> float | None:
    """RFC 3339 (``2026-11-29T16:07:35Z``, fractions allowed) to epoch seconds."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def label_times(obj: Mapping[str, Any]) -> LabelTimes:
    """Label key -> epoch seconds of the managedFields entry that owns it (latest wins).

    A managedFields entry's ``time`` is when that manager last wrote the object, which for
    a label it owns is when the label was last set by it: the best record a client has.
    """
    times: LabelTimes = {}
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        if not isinstance(entry, Mapping):
            continue
        when = parse_time(entry.get("time"))
        fields = ((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels")
        if when is None or not isinstance(fields, Mapping):
            continue
        for raw_key in fields:
            if raw_key.startswith("f:"):
                key = raw_key[2:]
                if when > times.get(key, 0.0):
                    times[key] = when
    return times


def _metadata(obj: Mapping[str, Any]) -> JsonObj:
    metadata = dict(obj.get("metadata") or {})
    metadata.pop("managedFields", None)
    return metadata


def reduce_node(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """A node without managedFields and ``status.images``, plus its label-change times."""
    times = label_times(obj)
    reduced = dict(obj)
    reduced["metadata"] = _metadata(obj)
    status = dict(obj.get("status") or {})
    status.pop("images", None)
    reduced["status"] = status
    return reduced, times


def reduce_plain(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """Any object without managedFields (DaemonSets, ClusterPolicies, ConfigMaps ...)."""
    reduced = dict(obj)
    reduced["metadata"] = _metadata(obj)
    return reduced, {}


def _gpu_resources(container: Mapping[str, Any]) -> JsonObj:
    """A container's name plus only its GPU and MIG requests and limits."""
    resources = container.get("resources") or {}
    out: JsonObj = {}
    for section in ("requests", "limits"):
        picked = {k: v for k, v in (resources.get(section) or {}).items()
                  if k.startswith(GPU_RESOURCE_PREFIXES)}
        if picked:
            out[section] = picked
    return {"name": container.get("name"), "resources": out} if out else {
        "name": container.get("name")}


def _pod_metadata(obj: Mapping[str, Any]) -> JsonObj:
    """Identity, labels, age, deletion, and the owner's kind and name (DaemonSet or not)."""
    metadata = obj.get("metadata") or {}
    kept: JsonObj = {k: metadata[k] for k in _POD_META_KEEP if k in metadata}
    owners = metadata.get("ownerReferences")
    if owners:
        kept["ownerReferences"] = [{"kind": o.get("kind"), "name": o.get("name")}
                                   for o in owners if isinstance(o, Mapping)]
    return kept


def _pod_status(status: Mapping[str, Any]) -> JsonObj:
    """Phase, conditions and each container's state, restarts and readiness."""
    kept: JsonObj = {k: status[k] for k in _POD_STATUS_KEEP if k in status}
    if status.get("conditions"):
        kept["conditions"] = [{k: c[k] for k in _CONDITION_KEEP if k in c}
                              for c in status["conditions"]]
    for key in ("initContainerStatuses", "containerStatuses"):
        if status.get(key):
            kept[key] = [{k: c[k] for k in _CONTAINER_STATUS_KEEP if k in c}
                         for c in status[key]]
    return kept


def _volumes(volumes: Any) -> list[JsonObj]:
    """Only emptyDir volumes matter (they block pod deletion during upgrades and drains)."""
    return [{"name": v.get("name"), "emptyDir": v["emptyDir"]}
            for v in volumes or () if isinstance(v, Mapping) and "emptyDir" in v]


def _pod_spec(spec: Mapping[str, Any]) -> JsonObj:
    """The node, container names in order (init progress), GPU requests, emptyDir volumes."""
    kept: JsonObj = {"nodeName": spec.get("nodeName")}
    for key in ("initContainers", "containers"):
        if spec.get(key):
            kept[key] = [_gpu_resources(c) for c in spec[key]]
    volumes = _volumes(spec.get("volumes"))
    if volumes:
        kept["volumes"] = volumes
    return kept


def reduce_operator_pod(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """An operand pod: what the pipeline reads (containers in order with their states,
    restarts and readiness; conditions; labels; owner), nothing of its long spec."""
    return ({"metadata": _pod_metadata(obj), "spec": _pod_spec(obj.get("spec") or {}),
             "status": _pod_status(obj.get("status") or {})}, {})


def gpu_request(obj: Mapping[str, Any]) -> bool:
    """Whether any container requests or limits a GPU or MIG resource."""
    spec = obj.get("spec") or {}
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or ():
            resources = container.get("resources") or {}
            for section in ("requests", "limits"):
                for name in resources.get(section) or {}:
                    if name.startswith(GPU_RESOURCE_PREFIXES):
                        return True
    return False


def reduce_gpu_pod(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes] | None:
    """A workload pod reduced to what the node view and drain impact need; ``None`` if it
    requests no GPU (most pods of a cluster, dropped on arrival)."""
    if not gpu_request(obj):
        return None
    status = obj.get("status") or {}
    return ({"metadata": _pod_metadata(obj), "spec": _pod_spec(obj.get("spec") or {}),
             "status": {k: status[k] for k in _POD_STATUS_KEEP if k in status}}, {})


def reduce_event(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """An Event with only the fields a timeline shows."""
    reduced: JsonObj = {k: obj[k] for k in _EVENT_KEEP if k in obj}
    reduced["apiVersion"] = obj.get("apiVersion", "v1")
    reduced["kind"] = "Event"
    reduced["metadata"] = _metadata(obj)
    return reduced, {}
