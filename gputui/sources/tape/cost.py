"""How much a snapshot builder must redo to move between two moments of a recording.

Why: a replay keeps a few warm :class:`~gputui.domain.snapshot.SnapshotBuilder` s parked at
different moments (:mod:`gputui.sources.tape.pool`), and a jump should move the one that
has least to rebuild. A builder rebuilds the nodes whose objects changed in between, and
every node when a cluster-wide input changed (the ClusterPolicy, a driver DaemonSet's
generation, the NVIDIADriver objects, the namespace, what is forbidden, unreadable or still
loading, a shared ConfigMap). The recording knows both while it is read: each objects frame
adds the objects it really changed (an object a keyframe repeats is not a change) and
whether it changed a cluster-wide input; sums kept per frame answer any pair of frames in
O(1).

An estimate, never a decision: what a build rebuilds is still decided by comparing the
objects (:func:`gputui.sources.tape.source.changed_nodes`), so a wrong estimate can only
make a jump slower, not its snapshot different.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

#: the cost of crossing a cluster-wide change: more than any count of changed objects
WIDE = 10**9
#: cluster-wide fields whose change makes the builder rebuild every node
_WIDE_FIELDS = frozenset({"cluster_policies", "nvidia_drivers", "operator_namespace",
                          "forbidden", "unreadable", "loading"})

State = Mapping[str, Mapping[Any, Any]]
Change = tuple[str, Any, Any]


class ChangeCost:
    """Per objects frame, the running count of changed objects and of cluster-wide changes."""

    def __init__(self) -> None:
        self._objects: list[int] = []
        self._wide: list[int] = []

    def add(self, changes: Sequence[Change], olds: Sequence[Any], fields: AbstractSet[str],
            replaced: State | None, after: State) -> None:
        """Account one frame: its changes with the object each replaced, the cluster-wide
        ``fields`` whose value it changed, and for a keyframe the collections it
        ``replaced`` (``after``: what it left)."""
        wide = bool(_WIDE_FIELDS & fields)
        changed = len(fields - _WIDE_FIELDS)
        for (name, _, value), old in zip(changes, olds, strict=True):
            if old is value:
                continue  # a keyframe repeating the object it already had
            changed += 1
            wide = wide or _wide_change(name, old, value)
        for name, items in (replaced or {}).items():  # what a keyframe no longer holds
            gone = items.keys() - after.get(name, {}).keys()
            changed += len(gone)
            wide = wide or any(_wide_change(name, items[key], None) for key in gone)
        self._objects.append(self.objects_through(len(self._objects) - 1) + changed)
        self._wide.append((self._wide[-1] if self._wide else 0) + wide)

    def frame_at_share(self, share: float) -> int:
        """The first frame by which ``share`` (0 to 1) of the changes after the first frame
        had happened (the first frame's objects are where every builder starts, not a
        change)."""
        if not self._objects:
            return 0
        first = self._objects[0]
        want = first + round((self._objects[-1] - first) * min(max(share, 0.0), 1.0))
        return min(bisect_left(self._objects, want), len(self._objects) - 1)

    def objects_through(self, frame: int) -> int:
        """Objects changed from the first frame through ``frame`` (0 before the first)."""
        return self._objects[frame] if frame >= 0 else 0

    def between(self, first: int, second: int) -> int:
        """What moving a builder from frame ``first`` to frame ``second`` costs: the objects
        changed in between, plus :data:`WIDE` per cluster-wide change in between."""
        low, high = sorted((first, second))
        if low == high or not self._objects:
            return 0
        objects = self._objects[high] - self._objects[max(low, 0)]
        wide = self._wide[high] - self._wide[max(low, 0)]
        return objects + WIDE * wide



def _wide_change(name: str, old: Any, new: Any) -> bool:
    """A DaemonSet added, removed or given a new generation; any ConfigMap change (a shared
    MIG or sharing config makes every MIG node rebuild; per-node ones are rare)."""
    if name == "configmaps":
        return True
    if name != "daemonsets":
        return False
    if old is None or new is None:
        return True
    return bool(_generation(old) != _generation(new))


def _generation(daemonset: Any) -> Any:
    metadata = daemonset.get("metadata") if isinstance(daemonset, dict) else None
    return metadata.get("generation") if isinstance(metadata, dict) else None
