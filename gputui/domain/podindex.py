"""Pods grouped by node, kept between builds so a change costs what it touches.

At 5,000 nodes the cache hands the builder ~45,000 pods per snapshot. Grouping them afresh
on every build (and counting DaemonSet-owned pods for the ``unscheduled`` figures) cost more
than rebuilding the one node that changed, so :class:`PodIndex` remembers each pod by its
identity: a watch replaces the dict of a pod that changed, so ``is`` tells an unchanged pod
in one pointer comparison, and only the pods that differ are regrouped.

:func:`pod_node_name` is the one rule that ties a pod to a node. The live cache must use the
same rule to say which nodes changed (``gputui.sources.cache``), or a pod that is bound to
its node only by selector (the CUDA validator) changes without its node being rebuilt.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from gputui.domain.inputs import JsonDict

PodKey = tuple[str, str]

HOSTNAME_LABEL = "kubernetes.io/hostname"
#: known pods passed at the end of the mapping before giving up on finding new ones there
_TAIL = 256


def _affinity_node(spec: Mapping[str, Any]) -> str | None:
    """The node a DaemonSet pod is pinned to before it is scheduled.

    The DaemonSet controller binds each pod with a required node affinity on
    ``metadata.name In [<node>]``; until the scheduler sets ``nodeName`` that is the only
    place the node is named (a pending, unschedulable operand pod).
    """
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = (node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
                if isinstance(node_affinity, dict) else None)
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], dict):
        return None
    fields = terms[0].get("matchFields")
    if not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], dict):
        return None
    field = fields[0]
    values = field.get("values")
    if (field.get("key") == "metadata.name" and field.get("operator") == "In"
            and isinstance(values, list) and len(values) == 1 and values[0]):
        return str(values[0])
    return None


def pod_node_name(pod: Mapping[str, Any]) -> str | None:
    """The node a pod runs on or is bound to, None when it names none.

    ``spec.nodeName`` once scheduled; before that the ``kubernetes.io/hostname`` node
    selector (the CUDA and plugin validator pods are pinned that way) or the DaemonSet
    controller's ``metadata.name`` node affinity.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    node = spec.get("nodeName")
    if node:
        return str(node)
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict) and selector.get(HOSTNAME_LABEL):
        return str(selector[HOSTNAME_LABEL])
    return _affinity_node(spec) if "affinity" in spec else None


def _daemonset_owners(pod: Mapping[str, Any]) -> tuple[str, ...]:
    meta = pod.get("metadata")
    owners = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not owners or not isinstance(owners, list):
        return ()
    return tuple(str(o.get("name", "")) for o in owners
                 if isinstance(o, dict) and o.get("kind") == "DaemonSet")


class PodIndex:
    """Pods by node and DaemonSet-owned pod counts, updated by difference."""

    def __init__(self) -> None:
        #: the pods of the last build; a pod's node and owners are derived again from its
        #: dict when it goes (the dicts are never changed in place), not stored twice
        self._pods: dict[PodKey, JsonDict] = {}
        self._by_node: dict[str, dict[PodKey, JsonDict]] = {}
        self._owned: dict[str, dict[str, int]] = {}  # namespace -> DaemonSet -> pods
        #: pods without ``spec.nodeName`` (bound by selector or affinity, or to no node):
        #: compared on every build, so a cache that tracks only ``nodeName`` misses nothing
        self._unplaced: set[PodKey] = set()

    def update(self, pods: Mapping[PodKey, JsonDict],
               changed_nodes: Collection[str] | None) -> set[str]:
        """Take the current pods; returns the nodes whose pod group changed.

        ``changed_nodes`` is the caller's word on which nodes' pods changed (see
        :func:`pod_node_name`): only the pods last seen on those nodes, and the pods without
        ``spec.nodeName``, are compared (by identity: a watch replaces the dict of a pod that
        changed). When the pod count then does not add up, a pod was added somewhere, and
        every pod is compared. None starts over.
        """
        touched: set[str] = set()
        if changed_nodes is None:
            self._reset()
            for key, pod in pods.items():
                self._add(key, pod, touched)
            return touched
        check = set(self._unplaced)
        for node in changed_nodes or ():
            check.update(self._by_node.get(node, ()))
        for key in check:
            now = pods.get(key)
            if now is not self._pods[key]:
                self._drop(key, touched)
                if now is not None:
                    self._add(key, now, touched)
        if len(pods) != len(self._pods):
            self._rescan(pods, touched)
        return touched

    def _rescan(self, pods: Mapping[PodKey, JsonDict], touched: set[str]) -> None:
        """Find pods added (or removed unannounced) since the last build.

        New keys arrive last in the cache's dicts (a recreated operand pod, a new job), so
        the newest keys are looked at first; only when the missing pods are not all among
        them is every pod compared.
        """
        missing = len(pods) - len(self._pods)
        if missing > 0 and isinstance(pods, dict):
            known = 0
            for key in reversed(pods):
                if key in self._pods:
                    known += 1
                    if known > _TAIL:
                        break
                    continue
                self._add(key, pods[key], touched)
                missing -= 1
                if not missing:
                    return
        old = self._pods
        for key in [key for key, pod in pods.items() if old.get(key) is not pod]:
            self._drop(key, touched)
            self._add(key, pods[key], touched)
        if len(old) != len(pods):
            for key in [key for key in old if key not in pods]:
                self._drop(key, touched)

    def pods_of(self, node: str) -> list[JsonDict]:
        """The node's pods, ordered by (namespace, name) so that any build order agrees."""
        group = self._by_node.get(node)
        if not group:
            return []
        return [group[key] for key in sorted(group)]

    def owned(self, namespace: str | None) -> dict[str, int]:
        """Pods per owning DaemonSet name, in ``namespace`` (every namespace when None)."""
        if namespace:
            return dict(self._owned.get(namespace, {}))
        total: dict[str, int] = {}
        for counts in self._owned.values():
            for name, count in counts.items():
                total[name] = total.get(name, 0) + count
        return total

    def _reset(self) -> None:
        self._pods, self._by_node, self._owned, self._unplaced = {}, {}, {}, set()

    def _add(self, key: PodKey, pod: JsonDict, touched: set[str]) -> None:
        node = pod_node_name(pod)
        self._pods[key] = pod
        if node is not None:
            self._by_node.setdefault(node, {})[key] = pod
            touched.add(node)
        spec = pod.get("spec")
        if not (isinstance(spec, dict) and spec.get("nodeName")):
            self._unplaced.add(key)
        owners = _daemonset_owners(pod)
        if owners:
            counts = self._owned.setdefault(key[0], {})
            for name in owners:
                counts[name] = counts.get(name, 0) + 1

    def _drop(self, key: PodKey, touched: set[str]) -> None:
        pod = self._pods.pop(key, None)
        if pod is None:
            return
        node = pod_node_name(pod)
        if node is not None:
            group = self._by_node.get(node, {})
            group.pop(key, None)
            if not group:
                self._by_node.pop(node, None)
            touched.add(node)
        self._unplaced.discard(key)
        counts = self._owned.get(key[0], {})
        for name in _daemonset_owners(pod):
            counts[name] -= 1
            if not counts[name]:
                del counts[name]
