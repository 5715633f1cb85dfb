"""Which nodes differ between two states of the cluster's input (a replay's builds).

A warm :class:`~gputui.domain.snapshot.SnapshotBuilder` rebuilds only the nodes it is told
changed; the live source learns them from the watch, a replay from comparing the objects of
the two moments it moves between. Headless: no textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.domain.podindex import pod_node_name
from gputui.sources.reduce import heartbeat_only


def changed_nodes(old: ClusterObjects, new: ClusterObjects) -> frozenset[str]:
    """Nodes whose Node, pods, label times, XIDs or GPU health differ between two states.

    Events, ConfigMaps and disruption budgets are compared by the builder itself (it keeps
    the last ones), and a change of the cluster-wide inputs (policy, DaemonSets) makes it
    rebuild every node.
    Objects are compared by identity first, then by value: a reader may decode unchanged
    objects again.
    """
    changed: set[str] = {key for key in _differing(old.nodes, new.nodes)
                         if not heartbeat_only(old.nodes.get(key), new.nodes.get(key))}
    for key in _differing(old.pods, new.pods):
        for pod in (old.pods.get(key), new.pods.get(key)):
            node = pod_node_name(pod) if pod is not None else None
            if node:
                changed.add(node)
    for per_node in ((old.label_times, new.label_times), (old.xids, new.xids),
                     (old.gpu_health, new.gpu_health)):
        changed.update(_differing(*per_node))
    return frozenset(changed)


def _differing(old: Mapping[Any, Any], new: Mapping[Any, Any]) -> set[Any]:
    """Keys added, removed, or whose value changed."""
    if old is new:
        return set()
    found = set(old.keys() ^ new.keys())
    for key, value in new.items():
        before = old.get(key)
        if before is not value and before is not None and before != value:
            found.add(key)
    return found
