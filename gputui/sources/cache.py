"""The object cache the feeds write into and the snapshot builder reads from.

Thread-safe: each feed's thread writes its own slot; the builder thread takes a consistent
copy under the same lock. The cache also remembers *what* changed since the last build, in
the domain's terms (node names), so rebuild cost follows the change, not the cluster:
anything not tied to one node (a DaemonSet, the ClusterPolicy, a shared ConfigMap) asks for
a full rebuild instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.sources.reduce import JsonObj, LabelTimes
from gputui.sources.resources import Key, object_key

NODE_SLOTS = ("nodes", "nodes-nfd")
POD_SLOTS = ("gpu-pods", "pods")  # later slots win: operand pods keep their full form
MIG_CONFIG_SUFFIX = "-mig-config"


class ObjectCache:
    """Reduced objects per feed, label-change times per node, and pending changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, dict[Key, JsonObj]] = {}
        self._label_times: dict[str, dict[str, LabelTimes]] = {}
        self._changed_nodes: set[str] = set()
        self._full = True
        self._version = 0

    # ------------------------------------------------------------------ writes
    def replace(self, slot: str, items: Iterable[tuple[JsonObj, LabelTimes]]) -> None:
        """Swap a feed's whole content (after a list or relist) in one step."""
        fresh: dict[Key, JsonObj] = {}
        times: dict[str, LabelTimes] = {}
        for obj, obj_times in items:
            key = object_key(obj)
            fresh[key] = obj
            if obj_times:
                times[key[1]] = obj_times
        with self._lock:
            old = self._slots.get(slot, {})
            self._slots[slot] = fresh
            if slot in NODE_SLOTS:
                self._label_times[slot] = times
            for key in set(old) | set(fresh):
                before, after = old.get(key), fresh.get(key)
                if _rv(before) != _rv(after):
                    self._note(slot, key, before, after)
            self._version += 1

    def apply(self, slot: str, event_type: str, obj: JsonObj, times: LabelTimes) -> bool:
        """One watch event (ADDED, MODIFIED or DELETED) for a feed; False if it changed
        nothing (the deletion of an object the feed never kept)."""
        key = object_key(obj)
        with self._lock:
            bucket = self._slots.setdefault(slot, {})
            before = bucket.get(key)
            if event_type == "DELETED" and before is None:
                return False
            if event_type == "DELETED":
                bucket.pop(key, None)
                after = None
                if slot in NODE_SLOTS:
                    self._label_times.get(slot, {}).pop(key[1], None)
            else:
                bucket[key] = obj
                after = obj
                if slot in NODE_SLOTS:
                    self._label_times.setdefault(slot, {})[key[1]] = times
            self._note(slot, key, before, after)
            self._version += 1
            return True

    def clear(self, slot: str) -> None:
        """Forget a feed (it became forbidden or its namespace changed)."""
        self.replace(slot, ())

    def _note(self, slot: str, key: Key, before: JsonObj | None, after: JsonObj | None) -> None:
        """Record which nodes an object change touches (caller holds the lock)."""
        if slot in NODE_SLOTS:
            self._changed_nodes.add(key[1])
        elif slot in POD_SLOTS:
            for obj in (before, after):
                node = ((obj or {}).get("spec") or {}).get("nodeName")
                if node:
                    self._changed_nodes.add(str(node))
        elif slot == "events":
            for obj in (before, after):
                node = ((obj or {}).get("involvedObject") or {}).get("name")
                if node:
                    self._changed_nodes.add(str(node))
        elif slot == "configmaps" and key[1].endswith(MIG_CONFIG_SUFFIX):
            self._changed_nodes.add(key[1][: -len(MIG_CONFIG_SUFFIX)])
        else:
            self._full = True

    # ------------------------------------------------------------------- reads
    @property
    def version(self) -> int:
        """Bumped on every write; lets a waiter tell "nothing new" cheaply."""
        with self._lock:
            return self._version

    def take_changes(self) -> frozenset[str] | None:
        """Node names changed since the last call, or ``None`` when a full build is due."""
        with self._lock:
            if self._full:
                changes: frozenset[str] | None = None
            else:
                changes = frozenset(self._changed_nodes)
            self._full = False
            self._changed_nodes = set()
            return changes

    def mark_full(self) -> None:
        """Ask for a full rebuild next time (time-based findings, namespace change)."""
        with self._lock:
            self._full = True

    def slot(self, slot: str) -> list[JsonObj]:
        """A copy of one feed's objects (tests, namespace discovery)."""
        with self._lock:
            return list(self._slots.get(slot, {}).values())

    def objects(self, **extra: Any) -> ClusterObjects:
        """A consistent :class:`ClusterObjects` of the current content.

        ``extra`` carries the fields the cache does not own (``operator_namespace``,
        ``context``, ``server``, ``forbidden``). The mappings are fresh copies, so the
        builder may keep them while the feeds go on writing.
        """
        with self._lock:
            nodes: dict[str, JsonObj] = {}
            times: dict[str, Mapping[str, float]] = {}
            for slot in NODE_SLOTS:
                for key, obj in self._slots.get(slot, {}).items():
                    nodes.setdefault(key[1], obj)
                for name, node_times in self._label_times.get(slot, {}).items():
                    times.setdefault(name, node_times)
            # GPU pods count only on GPU nodes; operand pods (the last slot) all count
            pods: dict[tuple[str, str], JsonObj] = {
                key: pod for key, pod in self._slots.get(POD_SLOTS[0], {}).items()
                if (pod.get("spec") or {}).get("nodeName") in nodes}
            pods.update(self._slots.get(POD_SLOTS[1], {}))
            return ClusterObjects(
                nodes=nodes,
                pods=pods,
                daemonsets={k[1]: v for k, v in self._slots.get("daemonsets", {}).items()},
                cluster_policies=tuple(self._slots.get("clusterpolicies", {}).values()),
                nvidia_drivers=tuple(self._slots.get("nvidiadrivers", {}).values()),
                configmaps=dict(self._slots.get("configmaps", {})),
                events=tuple(self._slots.get("events", {}).values()),
                label_times=times,
                **extra,
            )


def _rv(obj: Mapping[str, Any] | None) -> str | None:
    if obj is None:
        return None
    return str((obj.get("metadata") or {}).get("resourceVersion"))
