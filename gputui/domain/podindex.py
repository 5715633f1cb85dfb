"""Pods grouped by node, kept between builds so a change costs what it touches.

At 5,000 nodes the cache hands the builder ~45,000 pods per snapshot. Grouping them afresh
on every build (and counting DaemonSet-owned pods for the ``unscheduled`` figures) cost more
than rebuilding the one node that changed, so :class:`PodIndex` remembers each pod by its
identity: a watch replaces the object of a pod that changed, so ``is`` tells an unchanged pod
in one pointer comparison, and only the pods that differ are regrouped (and, when the
object is a raw dict rather than an already-read :class:`PodInfo`, read again).

:func:`pod_node_name` is the one rule that ties a pod to a node. The live cache must use the
same rule to say which nodes changed (``gputui.sources.cache``), or a pod that is bound to
its node only by selector (the CUDA validator) changes without its node being rebuilt.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from gputui.domain.labels import REVISION_HASH, TEMPLATE_GENERATION
from gputui.domain.pods import PodInfo, as_pod_info

PodKey = tuple[str, str]
#: a pod as the cache keeps it (read) or as fixtures hand it (a dict, read here once)
PodObject = PodInfo | Mapping[str, Any]

#: known pods passed at the end of the mapping before giving up on finding new ones there
_TAIL = 256


def pod_node_name(pod: PodObject) -> str | None:
    """The node a pod runs on or is bound to, None when it names none.

    ``spec.nodeName`` once scheduled; before that the ``kubernetes.io/hostname`` node
    selector (the CUDA and plugin validator pods are pinned that way) or the DaemonSet
    controller's ``metadata.name`` node affinity (:attr:`PodInfo.placement`).
    """
    return as_pod_info(pod).placement


class PodIndex:
    """Pods by node and DaemonSet-owned pod counts, updated by difference."""

    def __init__(self) -> None:
        #: the objects of the last build, by identity, and what each reads as
        self._pods: dict[PodKey, PodObject] = {}
        self._read: dict[PodKey, PodInfo] = {}
        self._by_node: dict[str, dict[PodKey, PodInfo]] = {}
        self._owned: dict[str, dict[str, int]] = {}  # namespace -> DaemonSet -> pods
        #: pods without ``spec.nodeName`` (bound by selector or affinity, or to no node):
        #: compared on every build, so a cache that tracks only ``nodeName`` misses nothing
        self._unplaced: set[PodKey] = set()
        #: namespace -> DaemonSet -> (controller-revision-hash, pod-template-generation) ->
        #: pods: what the DaemonSet's current revision is told from (``daemonsets.py``)
        self._revisions: dict[str, dict[str, dict[tuple[str, str], int]]] = {}

    def fork(self) -> PodIndex:
        """An independent copy sharing the pods themselves (never changed in place): a
        replay parks copies of a warm builder (``gputui.sources.tape.pool``)."""
        other = PodIndex()
        other._pods, other._read = dict(self._pods), dict(self._read)
        other._by_node = {node: dict(pods) for node, pods in self._by_node.items()}
        other._owned = {namespace: dict(counts) for namespace, counts in self._owned.items()}
        other._unplaced = set(self._unplaced)
        other._revisions = {namespace: {ds: dict(counts) for ds, counts in by_ds.items()}
                            for namespace, by_ds in self._revisions.items()}
        return other

    def update(self, pods: Mapping[PodKey, PodObject],
               changed_nodes: Collection[str] | None) -> set[str]:
        """Take the current pods; returns the nodes whose pod group changed.

        ``changed_nodes`` is the caller's word on which nodes' pods changed (see
        :func:`pod_node_name`): only the pods last seen on those nodes, and the pods without
        ``spec.nodeName``, are compared (by identity: a watch replaces the object of a pod
        that changed). When the pod count then does not add up, a pod was added somewhere,
        and every pod is compared. None starts over.
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

    def _rescan(self, pods: Mapping[PodKey, PodObject], touched: set[str]) -> None:
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

    def pods_of(self, node: str) -> list[PodInfo]:
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

    def revisions(self, namespace: str | None) -> dict[str, dict[tuple[str, str], int]]:
        """Per owning DaemonSet in ``namespace``: pods per (controller-revision-hash,
        pod-template-generation) label pair (copies)."""
        return {ds: dict(counts) for ds, counts in
                self._revisions.get(namespace or "", {}).items()}

    def _count_revision(self, namespace: str, info: PodInfo, step: int) -> None:
        owner = info.daemonset
        if not owner:
            return
        pair = (info.labels.get(REVISION_HASH, ""), info.labels.get(TEMPLATE_GENERATION, ""))
        counts = self._revisions.setdefault(namespace, {}).setdefault(owner, {})
        counts[pair] = counts.get(pair, 0) + step
        if counts[pair] <= 0:
            del counts[pair]
            if not counts:
                del self._revisions[namespace][owner]

    def _reset(self) -> None:
        self._pods, self._read, self._by_node = {}, {}, {}
        self._owned, self._unplaced, self._revisions = {}, set(), {}

    def _add(self, key: PodKey, pod: PodObject, touched: set[str]) -> None:
        info = as_pod_info(pod)
        self._pods[key] = pod
        self._read[key] = info
        node = info.placement
        if node:
            self._by_node.setdefault(node, {})[key] = info
            touched.add(node)
        if not info.node:
            self._unplaced.add(key)
        owner = info.daemonset
        if owner:
            counts = self._owned.setdefault(key[0], {})
            counts[owner] = counts.get(owner, 0) + 1
            self._count_revision(key[0], info, 1)

    def _drop(self, key: PodKey, touched: set[str]) -> None:
        if self._pods.pop(key, None) is None:
            return
        info = self._read.pop(key)
        node = info.placement
        if node:
            group = self._by_node.get(node, {})
            group.pop(key, None)
            if not group:
                self._by_node.pop(node, None)
            touched.add(node)
        self._unplaced.discard(key)
        owner = info.daemonset
        self._count_revision(key[0], info, -1)
        counts = self._owned.get(key[0], {})
        if owner and owner in counts:
            counts[owner] -= 1
            if not counts[owner]:
                del counts[owner]
