"""Shrink Kubernetes objects on arrival to what gputui reads, keeping label-change times.

The big feeds (nodes, pods) are decoded straight into their reduced form by
:mod:`gputui.sources.decode` (label-change times included); this module holds what both
share (timestamps, which labels are timed, string interning, hash-consing) and the reducers
of the small feeds.

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
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

JsonObj = dict[str, Any]
LabelTimes = dict[str, float]

#: labels whose last change time is kept (see :func:`timed_label`)
TIMED_LABEL_PREFIXES = ("nvidia.com/gpu.deploy.", "nvidia.com/gpu-driver-upgrade",
                        "nvidia.com/mig.config", "nvidia.com/device-plugin.config",
                        "nvidia.com/gpu.present", "nvidia.com/gpu-operator.",
                        "nvidia.com/gpu.workload.config")
#: resource-name prefixes that mean "this pod uses GPUs" (upgrade controller's filter)
GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-")

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


def share_flat(value: dict[str, Any]) -> dict[str, Any]:
    """:data:`share` for a dict of scalars (conditions, capacity), keyed in C by its items."""
    key = ("f",) + tuple(value.items())
    with share._lock:
        found = share._table.get(key)
        if found is not None:
            return found  # type: ignore[no-any-return]
        if len(share._table) >= share.limit:
            share._table.clear()
        share._table[key] = intern_strings(value)
        return value


def _metadata(obj: Mapping[str, Any]) -> JsonObj:
    metadata = dict(obj.get("metadata") or {})
    metadata.pop("managedFields", None)
    return metadata


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


#: what a PodDisruptionBudget keeps: whom it selects, its limit, and what its status allows
_PDB_SPEC = ("selector", "minAvailable", "maxUnavailable")
_PDB_STATUS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
_PDB_METADATA = ("namespace", "name", "resourceVersion", "uid")


def reduce_budget(obj: Mapping[str, Any]) -> tuple[JsonObj, LabelTimes]:
    """A PodDisruptionBudget with only what tells which budget holds a pod: its selector and
    limit, the disruption controller's counts (not ``disruptedPods``, which changes on every
    eviction and says nothing a hint uses), its namespace, name and resourceVersion."""
    def keep(value: Any, keys: tuple[str, ...]) -> JsonObj:
        return {k: value[k] for k in keys if k in value} if isinstance(value, Mapping) else {}

    return {"apiVersion": obj.get("apiVersion", "policy/v1"), "kind": "PodDisruptionBudget",
            "metadata": keep(obj.get("metadata"), _PDB_METADATA),
            "spec": keep(obj.get("spec"), _PDB_SPEC),
            "status": keep(obj.get("status"), _PDB_STATUS)}, {}


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


def heartbeat_only(old: Any, new: Any) -> bool:
    """Whether two versions of a Node differ only by the kubelet's status report (every
    5 minutes): the conditions' ``lastHeartbeatTime`` and the ``resourceVersion`` the write
    bumped. Nothing gputui shows reads either, so the live cache rebuilds no node for it,
    the writer does not record it (at 5,000 nodes they were over half of the node versions
    every open re-reads) and a replay does not rebuild the node for it."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return False
    return bool(_without_heartbeat(old) == _without_heartbeat(new))


def _without_heartbeat(node: Mapping[str, Any]) -> dict[str, Any]:
    bare = dict(node)
    metadata = node.get("metadata")
    if isinstance(metadata, Mapping):
        bare["metadata"] = {k: v for k, v in metadata.items() if k != "resourceVersion"}
    status = node.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if isinstance(status, Mapping) and isinstance(conditions, list):
        bare["status"] = {**status, "conditions": [
            {k: v for k, v in c.items() if k != "lastHeartbeatTime"}
            if isinstance(c, Mapping) else c for c in conditions]}
    return bare
