"""The object cache the feeds write into and the snapshot builder reads from.

Threading: the feeds (one reflector thread each) only *submit* changes: :meth:`replace`
after a list, :meth:`apply` per watch event. Submissions wait in an inbox; the one thread
that builds snapshots applies them with :meth:`apply_pending` just before each build. So
the cache's content changes only on the build thread, between builds, and the builder can
be handed the cache's own live mappings (:meth:`build_inputs`) instead of a copy of ~45,000
pods per build: nothing mutates them while a build runs. The feeds never wait for a build
(a full one takes seconds at 5,000 nodes), and other threads read a copy (:meth:`objects`,
:meth:`slot`) under the lock that guards the content.

Change tracking is in the domain's terms (node names, tied to pods by the domain's
:func:`~gputui.domain.podindex.pod_node_name`), so rebuild cost follows the change, not the
cluster. Objects are replaced, never changed in place: the builder tells a changed pod by
identity. Cluster-wide objects (DaemonSets, ClusterPolicy, shared ConfigMaps) name no node;
the builder compares what they feed into every node itself and rebuilds all nodes when that
differs, so they need no full rebuild from here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.domain.podindex import pod_node_name
from gputui.domain.pods import PodInfo
from gputui.sources.reduce import JsonObj, LabelTimes, heartbeat_only
from gputui.sources.resources import Key, object_key

NODE_SLOTS = ("nodes", "nodes-nfd", "nodes-nfd-0302", "nodes-nfd-0300")  # earlier slots win
GPU_PODS, OPERAND_PODS = "gpu-pods", "pods"  # operand pods win: they keep their full form
POD_SLOTS = (GPU_PODS, OPERAND_PODS)
MIG_CONFIG_SUFFIX = "-mig-config"
#: slots handed to the builder as tuples or dicts that are rebuilt only when they change
BUDGETS = "poddisruptionbudgets"
_SMALL_SLOTS = ("daemonsets", "clusterpolicies", "nvidiadrivers", "configmaps", "events",
                "daemonset-events", BUDGETS)
#: the slots whose objects the domain takes as ``events`` (upgrade and FailedCreate events)
EVENT_SLOTS = ("events", "daemonset-events")

Item = tuple[JsonObj, LabelTimes]
#: (slot, items) replaces a slot; (slot, event type, object, label times) is one event
_Pending = tuple[str, list[Item]] | tuple[str, str, JsonObj, LabelTimes]


class ObjectCache:
    """Reduced objects per feed, merged views for the builder, and pending changes."""

    def __init__(self) -> None:
        self._inbox_lock = threading.Lock()
        self._inbox: list[_Pending] = []
        #: keys each slot holds once the inbox is applied (drops unknown deletions early)
        self._known: dict[str, set[Key]] = {}
        self._lock = threading.Lock()  # the content below; written by apply_pending only
        self._slots: dict[str, dict[Key, JsonObj]] = {}
        self._slot_times: dict[str, dict[str, LabelTimes]] = {}
        self._nodes: dict[str, JsonObj] = {}
        self._times: dict[str, LabelTimes] = {}
        self._pods: dict[Key, JsonObj] = {}
        self._gpu_pods_on: dict[str, set[Key]] = {}  # node -> its keys in the GPU pod slot
        self._small: dict[str, Any] = {}  # slot -> the tuple or dict last handed out
        self._changed_nodes: set[str] = set()
        self._node_objects_changed = False  # a node itself (not what it is built with)
        self._full = True
        self._version = 0

    # ------------------------------------------------------- writes (any thread)
    def replace(self, slot: str, items: Iterable[Item]) -> None:
        """Swap a feed's whole content (after a list or relist) in one step."""
        fresh = list(items)
        keys = {object_key(obj) for obj, _ in fresh}
        with self._inbox_lock:
            self._inbox.append((slot, fresh))
            self._known[slot] = keys

    def apply(self, slot: str, event_type: str, obj: JsonObj, times: LabelTimes) -> bool:
        """One watch event (ADDED, MODIFIED or DELETED) for a feed; False if it changes
        nothing (the deletion of an object the feed does not keep, e.g. a non-GPU pod)."""
        key = object_key(obj)
        with self._inbox_lock:
            known = self._known.setdefault(slot, set())
            if event_type == "DELETED":
                if key not in known:
                    return False
                known.discard(key)
            else:
                known.add(key)
            self._inbox.append((slot, event_type, obj, times))
            return True

    def clear(self, slot: str) -> None:
        """Forget a feed (it became forbidden or its namespace changed)."""
        self.replace(slot, ())

    def mark_full(self) -> None:
        """Ask for a full rebuild next time (first snapshot, namespace change, failure)."""
        with self._lock:
            self._full = True

    # ------------------------------------------------------ the build thread
    def apply_pending(self) -> bool:
        """Apply what the feeds submitted; True when anything changed.

        Call only from the thread that builds snapshots: the mappings from
        :meth:`build_inputs` change here and nowhere else.
        """
        with self._inbox_lock:
            pending, self._inbox = self._inbox, []
        if not pending:
            return False
        with self._lock:
            before = self._version
            for change in pending:
                if len(change) == 2:
                    self._replace(change[0], change[1])
                else:
                    slot, event_type, obj, times = change
                    self._put(slot, object_key(obj),
                              None if event_type == "DELETED" else obj, times)
            return self._version != before

    def node_objects_changed(self) -> bool:
        """Whether a Node object itself came, went or changed (or a full build is due):
        what a screen that shows only the nodes, before their pods are read, would show."""
        with self._lock:
            return self._full or self._node_objects_changed

    def take_changes(self) -> frozenset[str] | None:
        """Node names changed since the last call, or ``None`` when a full build is due."""
        with self._lock:
            changes = None if self._full else frozenset(self._changed_nodes)
            self._full = False
            self._changed_nodes = set()
            self._node_objects_changed = False
            return changes

    def build_inputs(self, **extra: Any) -> ClusterObjects:
        """The builder's input, sharing the cache's live mappings (no copy).

        Only for the thread that calls :meth:`apply_pending`, and valid until its next call.
        ``extra`` carries the fields the cache does not own (``operator_namespace``,
        ``context``, ``server``, ``forbidden``, ``xids``).
        """
        return ClusterObjects(
            nodes=self._nodes, pods=self._pods, label_times=self._times,
            daemonsets=self._small_view("daemonsets", lambda b: {k[1]: v for k, v in b.items()}),
            cluster_policies=self._small_view("clusterpolicies", _values),
            nvidia_drivers=self._small_view("nvidiadrivers", _values),
            configmaps=self._small_view("configmaps", dict),
            events=sum((self._small_view(s, _values) for s in EVENT_SLOTS), ()),
            disruption_budgets=self._small_view(BUDGETS, _values), **extra)

    # --------------------------------------------------- reads (any thread)
    @property
    def version(self) -> int:
        """Bumped on every applied change; lets a waiter tell "nothing new" cheaply."""
        with self._lock:
            return self._version

    def slot(self, slot: str) -> list[JsonObj]:
        """A copy of one feed's applied objects (namespace discovery, tests)."""
        with self._lock:
            return list(self._slots.get(slot, {}).values())

    def objects(self, **extra: Any) -> ClusterObjects:
        """A copy of the applied content, for threads other than the builder's."""
        with self._lock:
            return ClusterObjects(
                nodes=dict(self._nodes), pods=dict(self._pods), label_times=dict(self._times),
                daemonsets={k[1]: v for k, v in self._slots.get("daemonsets", {}).items()},
                cluster_policies=tuple(self._slots.get("clusterpolicies", {}).values()),
                nvidia_drivers=tuple(self._slots.get("nvidiadrivers", {}).values()),
                configmaps=dict(self._slots.get("configmaps", {})),
                events=tuple(e for s in EVENT_SLOTS for e in self._slots.get(s, {}).values()),
                disruption_budgets=tuple(self._slots.get(BUDGETS, {}).values()), **extra)

    # --------------------------------------------------------------- internals
    def _replace(self, slot: str, items: list[Item]) -> None:
        """A relist: objects whose resourceVersion did not move keep their identity, so
        the builder sees no change for them (caller holds the lock)."""
        old = self._slots.get(slot, {})
        seen: set[Key] = set()
        for obj, times in items:
            key = object_key(obj)
            seen.add(key)
            if _rv(old.get(key)) != _rv(obj):
                self._put(slot, key, obj, times)
        for key in [key for key in old if key not in seen]:
            self._put(slot, key, None, {})
        self._slots.setdefault(slot, {})
        self._version += 1

    def _put(self, slot: str, key: Key, after: JsonObj | None, times: LabelTimes) -> None:
        """Store (or with None remove) one object and keep the merged views in step."""
        bucket = self._slots.setdefault(slot, {})
        before = bucket.get(key)
        if after is None:
            if before is None:
                return
            del bucket[key]
        else:
            bucket[key] = after
        self._version += 1
        if not (slot in NODE_SLOTS and heartbeat_only(before, after)
                and self._slot_times.get(slot, {}).get(key[1]) == (times or None)):
            self._note(slot, key, before, after)  # not for the kubelet's status report:
        if slot in NODE_SLOTS:                    # nothing shown changes, no node rebuilt
            slot_times = self._slot_times.setdefault(slot, {})
            if after is not None and times:
                slot_times[key[1]] = times
            else:
                slot_times.pop(key[1], None)
            self._merge_node(key[1])
        elif slot in POD_SLOTS:
            if slot == GPU_PODS:
                self._index_gpu_pod(key, before, after)
            self._merge_pod(key)
        elif slot in _SMALL_SLOTS:
            self._small.pop(slot, None)

    def _merge_node(self, name: str) -> None:
        """The merged node (first slot that has it), and its GPU pods when it comes or goes."""
        was = name in self._nodes
        for slot in NODE_SLOTS:
            found = self._slots.get(slot, {}).get(("", name))
            if found is not None:
                self._nodes[name] = found
                times = self._slot_times.get(slot, {}).get(name)
                if times:
                    self._times[name] = times
                else:
                    self._times.pop(name, None)
                break
        else:
            self._nodes.pop(name, None)
            self._times.pop(name, None)
        if was != (name in self._nodes):
            for key in list(self._gpu_pods_on.get(name, ())):
                self._merge_pod(key)

    def _index_gpu_pod(self, key: Key, before: JsonObj | None, after: JsonObj | None) -> None:
        old = pod_node_name(before) if before is not None else None
        new = pod_node_name(after) if after is not None else None
        if old is not None and old != new:
            keys = self._gpu_pods_on.get(old)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._gpu_pods_on[old]
        if new is not None:
            self._gpu_pods_on.setdefault(new, set()).add(key)

    def _merge_pod(self, key: Key) -> None:
        """The merged pod: the operand pod, else a GPU pod on a known GPU node."""
        pod = self._slots.get(OPERAND_PODS, {}).get(key)
        if pod is None:
            gpu = self._slots.get(GPU_PODS, {}).get(key)
            if gpu is not None and pod_node_name(gpu) in self._nodes:
                pod = gpu
        if pod is None:
            self._pods.pop(key, None)
        elif self._pods.get(key) is not pod:
            self._pods[key] = pod  # a new key goes last, where the builder looks first

    def _note(self, slot: str, key: Key, before: JsonObj | None, after: JsonObj | None) -> None:
        """Record which nodes an object change touches (caller holds the lock)."""
        if slot in NODE_SLOTS:
            self._changed_nodes.add(key[1])
            self._node_objects_changed = True
        elif slot in POD_SLOTS:
            for obj in (before, after):
                node = pod_node_name(obj) if obj is not None else None
                if node:
                    self._changed_nodes.add(node)
        elif slot == "events":
            for obj in (before, after):
                node = ((obj or {}).get("involvedObject") or {}).get("name")
                if node:
                    self._changed_nodes.add(str(node))
        elif slot == "configmaps" and key[1].endswith(MIG_CONFIG_SUFFIX):
            self._changed_nodes.add(key[1][: -len(MIG_CONFIG_SUFFIX)])

    def _small_view(self, slot: str, make: Any) -> Any:
        """A slot as the builder takes it, made again only after the slot changed."""
        view = self._small.get(slot)
        if view is None:
            view = self._small[slot] = make(self._slots.get(slot, {}))
        return view


def _values(bucket: Mapping[Key, JsonObj]) -> tuple[JsonObj, ...]:
    return tuple(bucket.values())


def _rv(obj: PodInfo | Mapping[str, Any] | None) -> str | None:
    if obj is None:
        return None
    if isinstance(obj, PodInfo):
        return obj.resource_version
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
