"""Shrink Kubernetes objects on arrival to what gputui reads, keeping label-change times.

Why: at 5,000 nodes the raw lists are hundreds of megabytes, mostly ``managedFields``,
``status.images`` and pod spec detail gputui never shows. Each page is reduced before the
next is read, so memory follows what gputui keeps. ``managedFields`` are read once here for
the only thing they carry that nothing else does: when each node label last changed
(``nvidia.com/mig.config.state`` pending since when, upgrade state since when).

Every reducer returns a new dict (or ``None`` to drop the object); nested values it keeps
are shared with the raw object (their strings interned in place, equal values), so the
caller must discard the raw page, as the list and watch loops do.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from gputui.domain.selectors import parse_selector

JsonObj = dict[str, Any]
LabelTimes = dict[str, float]

#: labels whose last change time is kept (see :func:`timed_label`)
TIMED_LABEL_PREFIXES = ("nvidia.com/gpu.deploy.", "nvidia.com/gpu-driver-upgrade",
                        "nvidia.com/mig.config", "nvidia.com/device-plugin.config",
                        "nvidia.com/gpu.present", "nvidia.com/gpu-operator.",
                        "nvidia.com/gpu.workload.config")
#: resource-name prefixes that mean "this pod uses GPUs" (upgrade controller's filter)
GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-")

_POD_META_KEEP = ("name", "namespace", "resourceVersion", "labels",
                  "creationTimestamp", "deletionTimestamp")
_POD_STATUS_KEEP = ("phase", "reason", "message", "startTime")
_CONDITION_KEEP = ("type", "status", "reason", "message")
_CONTAINER_STATUS_KEEP = ("name", "ready", "restartCount", "state")
#: strings up to this long are interned: label values, reasons, container names and
#: timestamps repeat across thousands of objects, and one copy of each is enough
_INTERN_MAX = 96
_EVENT_KEEP = ("involvedObject", "reason", "message", "type", "count", "firstTimestamp",
               "lastTimestamp", "eventTime", "source", "reportingComponent", "series")


def parse_time(text: Any) -> float | None:
    """RFC 3339 (``2026-11-29T16:07:35Z``, fractions allowed) to epoch seconds."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def timed_label(key: str) -> bool:
    """Whether gputui keeps the change time of this label: the operator's state labels
    (deploy, upgrade, MIG, device-plugin config, presence, driver owner), not the dozens of
    NFD and GFD facts whose age nobody asks about (that would triple the node cache)."""
    return key.startswith(TIMED_LABEL_PREFIXES)


def label_times(obj: Mapping[str, Any]) -> LabelTimes:
    """Label key -> epoch seconds of the managedFields entry that owns it (latest wins),
    for the labels :func:`timed_label` keeps.

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
            if raw_key.startswith("f:") and timed_label(raw_key[2:]):
                key = sys.intern(raw_key[2:])
                if when > times.get(key, 0.0):
                    times[key] = when
    return times


def _intern(value: Any) -> Any:
    return sys.intern(value) if isinstance(value, str) and len(value) <= _INTERN_MAX else value


def intern_strings(value: Any) -> Any:
    """The same JSON value with short strings (keys and values) interned, in place.

    At 5,000 nodes and 40,000 pods most strings repeat ("true", "Running", label keys,
    container names, reasons); sharing one copy of each roughly halves what the cache
    holds, for a dictionary lookup per string.
    """
    if isinstance(value, dict):
        for key, item in list(value.items()):
            if isinstance(item, str):
                value[key] = sys.intern(item) if len(item) <= _INTERN_MAX else item
            elif isinstance(item, (dict, list)):
                intern_strings(item)
        return value
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                value[index] = sys.intern(item) if len(item) <= _INTERN_MAX else item
            elif isinstance(item, (dict, list)):
                intern_strings(item)
    return value


def _freeze(value: Any) -> Any:
    """A hashable twin of a JSON value (dict order kept: one controller writes one order)."""
    if isinstance(value, dict):
        return ("d",) + tuple((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return ("l",) + tuple(_freeze(v) for v in value)
    return value


class _Shared:
    """Hands out one object for equal small JSON values (hash-consing).

    Every pod of a DaemonSet revision has the same labels, owner and container list; at
    40,000 operand pods one shared copy of each saves about a third of the cache. The
    values are read-only by contract (the domain never mutates its input). Bounded: the
    table is cleared when it grows past ``limit`` distinct values.
    """

    def __init__(self, limit: int = 8192):
        self.limit = limit
        self._table: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, value: Any) -> Any:
        key = _freeze(value)
        with self._lock:
            found = self._table.get(key)
            if found is not None:
                return found
            if len(self._table) >= self.limit:
                self._table.clear()
            self._table[key] = intern_strings(value)
            return value


share = _Shared()


def _metadata(obj: Mapping[str, Any]) -> JsonObj:
    metadata = dict(obj.get("metadata") or {})
    metadata.pop("managedFields", None)
    return metadata


def reduce_node(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """A node without managedFields, ``status.images``, ``daemonEndpoints`` and condition
    heartbeats (they change on every kubelet report), plus its label-change times."""
    times = label_times(obj)
    reduced = dict(obj)
    reduced["metadata"] = _metadata(obj)
    status = {k: v for k, v in (obj.get("status") or {}).items()
              if k not in ("images", "daemonEndpoints")}
    if status.get("conditions"):
        status["conditions"] = [share({k: v for k, v in c.items() if k != "lastHeartbeatTime"})
                                for c in status["conditions"]]
    for key in ("capacity", "allocatable"):
        if status.get(key):
            status[key] = share(status[key])
    reduced["status"] = status
    return intern_strings(reduced), times


def reduce_plain(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """Any object without managedFields (DaemonSets, ClusterPolicies, NVIDIADrivers)."""
    reduced = dict(obj)
    reduced["metadata"] = _metadata(obj)
    return reduced, {}


def reduce_configmap(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """A ConfigMap whose ``data`` is shared with every equal one: the MIG manager writes a
    ``<node>-mig-config`` per node, identical across nodes of one GPU model."""
    reduced, _ = reduce_plain(obj)
    if isinstance(reduced.get("data"), dict):
        reduced["data"] = share(reduced["data"])
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
    if "creationTimestamp" in kept:
        kept["creationTimestamp"] = _intern(kept["creationTimestamp"])
    if kept.get("labels"):
        kept["labels"] = share(kept["labels"])
    owners = metadata.get("ownerReferences")
    if owners:
        kept["ownerReferences"] = share([{"kind": o.get("kind"), "name": o.get("name")}
                                         for o in owners if isinstance(o, Mapping)])
    return kept


def _container_status(status: Mapping[str, Any]) -> JsonObj:
    """Name, readiness, restarts, and the current and last state with interned strings."""
    kept = {k: status[k] for k in _CONTAINER_STATUS_KEEP if k in status}
    kept["name"] = _intern(kept.get("name"))
    for key in ("state", "lastState"):
        value = status.get(key)
        if value and isinstance(value, dict):
            kept[key] = {kind: {k: _intern(v) for k, v in detail.items()}
                         if isinstance(detail, dict) else detail
                         for kind, detail in value.items()}
    return kept


def _pod_status(status: Mapping[str, Any]) -> JsonObj:
    """Phase, each container's state, restarts and readiness, and the conditions that
    are not True (a False ``PodScheduled`` says why a pod is Pending; True ones say
    nothing the containers do not)."""
    kept: JsonObj = {k: _intern(status[k]) for k in _POD_STATUS_KEEP if k in status}
    conditions = [{k: c[k] for k in _CONDITION_KEEP if k in c}
                  for c in status.get("conditions") or () if c.get("status") != "True"]
    if conditions:
        kept["conditions"] = conditions
    for key in ("initContainerStatuses", "containerStatuses"):
        if status.get(key):
            kept[key] = [_container_status(c) for c in status[key]]
    return kept


def _volumes(volumes: Any) -> list[JsonObj]:
    """Only emptyDir volumes matter (they block pod deletion during upgrades and drains)."""
    return [{"name": v.get("name"), "emptyDir": v["emptyDir"]}
            for v in volumes or () if isinstance(v, Mapping) and "emptyDir" in v]


def _pod_spec(spec: Mapping[str, Any]) -> JsonObj:
    """The node, container names in order (init progress), GPU requests, emptyDir volumes."""
    kept: JsonObj = {"nodeName": _intern(spec.get("nodeName"))}
    for key in ("initContainers", "containers"):
        if spec.get(key):
            kept[key] = share([_gpu_resources(c) for c in spec[key]])
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


def gpu_pod_reducer(selectors: tuple[str, ...] = ()) -> Callable[
        [Mapping[str, Any]], tuple[JsonObj, LabelTimes] | None]:
    """:func:`reduce_gpu_pod` that also keeps pods matching any of ``selectors``: the
    upgrade controller's ``waitForCompletion.podSelector`` waits on every pod it selects,
    GPU or not (k8s-operator-libs ``pkg/upgrade/upgrade_state.go``)."""
    if not selectors:
        return reduce_gpu_pod
    matchers = [parse_selector(selector) for selector in selectors]

    def reduce(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes] | None:
        if not gpu_request(obj):
            labels = (obj.get("metadata") or {}).get("labels") or {}
            if not any(match(labels) for match in matchers):
                return None
        status = obj.get("status") or {}
        return ({"metadata": _pod_metadata(obj), "spec": _pod_spec(obj.get("spec") or {}),
                 "status": {k: status[k] for k in _POD_STATUS_KEEP if k in status}}, {})
    return reduce


def wait_selectors(policies: Sequence[Mapping[str, Any]],
                   drivers: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Every ``waitForCompletion`` selector in force (ClusterPolicy and NVIDIADrivers)."""
    from gputui.domain.policy import read_upgrade_policy

    specs = [((p.get("spec") or {}).get("driver") or {}) for p in policies]
    specs += [(d.get("spec") or {}) for d in drivers]
    found = {read_upgrade_policy(spec.get("upgradePolicy") or {}, "").wait_for_completion_selector
             for spec in specs}
    return tuple(sorted(selector for selector in found if selector))


def reduce_event(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """An Event with only the fields a timeline shows."""
    reduced: JsonObj = {k: obj[k] for k in _EVENT_KEEP if k in obj}
    reduced["apiVersion"] = obj.get("apiVersion", "v1")
    reduced["kind"] = "Event"
    reduced["metadata"] = _metadata(obj)
    return reduced, {}
