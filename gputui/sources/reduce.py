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

_POD_SPEC_KEEP = ("nodeName", "initContainers", "containers", "volumes", "priorityClassName",
                  "nodeSelector", "restartPolicy", "schedulerName")
_CONTAINER_KEEP = ("name", "image", "resources", "env")
_STATUS_DROP = ("podIPs", "hostIPs", "podIP", "hostIP", "qosClass")
_CONTAINER_STATUS_DROP = ("imageID", "containerID", "volumeMounts", "allocatedResources",
                          "user", "resources")
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


def _container(spec: Mapping[str, Any], keep_env: bool) -> JsonObj:
    out = {k: spec[k] for k in _CONTAINER_KEEP if k in spec and (keep_env or k != "env")}
    return out


def _container_status(status: Mapping[str, Any]) -> JsonObj:
    return {k: v for k, v in status.items() if k not in _CONTAINER_STATUS_DROP}


def _pod_status(status: Mapping[str, Any]) -> JsonObj:
    out = {k: v for k, v in status.items() if k not in _STATUS_DROP}
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        if key in out:
            out[key] = [_container_status(s) for s in out[key] or ()]
    return out


def _volumes(volumes: Any) -> list[JsonObj]:
    """Only emptyDir volumes matter (they block pod deletion during upgrades and drains)."""
    return [{"name": v.get("name"), "emptyDir": v["emptyDir"]}
            for v in volumes or () if isinstance(v, Mapping) and "emptyDir" in v]


def reduce_operator_pod(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """An operand pod: metadata, the spec parts that name containers, the whole status.

    Container ``env`` is kept: the driver pod's ``DRIVER_CONFIG_DIGEST`` decides whether an
    upgrade is restart-only.
    """
    spec = obj.get("spec") or {}
    kept: JsonObj = {k: spec[k] for k in _POD_SPEC_KEEP if k in spec}
    for key in ("initContainers", "containers"):
        if key in kept:
            kept[key] = [_container(c, keep_env=True) for c in kept[key] or ()]
    if "volumes" in kept:
        kept["volumes"] = _volumes(kept["volumes"])
    reduced = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", "Pod"),
               "metadata": _metadata(obj), "spec": kept,
               "status": _pod_status(obj.get("status") or {})}
    return reduced, {}


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


def _gpu_resources(container: Mapping[str, Any]) -> JsonObj:
    resources = container.get("resources") or {}
    out: JsonObj = {}
    for section in ("requests", "limits"):
        picked = {k: v for k, v in (resources.get(section) or {}).items()
                  if k.startswith(GPU_RESOURCE_PREFIXES)}
        if picked:
            out[section] = picked
    return {"name": container.get("name"), "resources": out}


def reduce_gpu_pod(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes] | None:
    """A workload pod reduced to what the node view and drain impact need; ``None`` if it
    requests no GPU (most pods of a cluster, dropped on arrival)."""
    if not gpu_request(obj):
        return None
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    metadata = _metadata(obj)
    metadata.pop("annotations", None)
    reduced_spec: JsonObj = {
        "nodeName": spec.get("nodeName"),
        "containers": [_gpu_resources(c) for c in spec.get("containers") or ()],
    }
    if spec.get("initContainers"):
        reduced_spec["initContainers"] = [_gpu_resources(c) for c in spec["initContainers"]]
    volumes = _volumes(spec.get("volumes"))
    if volumes:
        reduced_spec["volumes"] = volumes
    reduced_status = {k: status[k] for k in ("phase", "startTime", "reason", "message")
                      if k in status}
    return ({"apiVersion": obj.get("apiVersion", "v1"), "kind": "Pod", "metadata": metadata,
             "spec": reduced_spec, "status": reduced_status}, {})


def reduce_event(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """An Event with only the fields a timeline shows."""
    reduced: JsonObj = {k: obj[k] for k in _EVENT_KEEP if k in obj}
    reduced["apiVersion"] = obj.get("apiVersion", "v1")
    reduced["kind"] = "Event"
    reduced["metadata"] = _metadata(obj)
    return reduced, {}
