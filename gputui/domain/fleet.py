"""Fleet-wide parts of a snapshot kept by difference: the node mapping, counts, findings.

Each build hands :class:`Fleet` only the node views that changed. The ordered node mapping is
copied (C speed) rather than rebuilt, counts move by the changed nodes' contributions, and the
findings list is a merge of per-node lists that are already in order, instead of a sort of
every finding in the cluster.

The findings order is :func:`finding_order`'s: most severe first, cluster-wide before nodes,
then node name, code and subject. Within one severity that is: cluster findings, then each
node's in name order, so the list is a concatenation per severity of sorted parts.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from gputui.domain import labels as L
from gputui.domain.catalogue import CATALOGUE
from gputui.domain.pane import Pane
from gputui.domain.model import Finding, NodeView, SnapshotCounts

_RANKS = (3, 2, 1)
_EMPTY_NODES: Mapping[str, NodeView] = MappingProxyType({})


def finding_order(finding: Finding) -> tuple[int, bool, str, str, str]:
    """The sort key of a snapshot's findings (see the module docstring)."""
    return (-finding.severity.rank, finding.node is not None, finding.node or "",
            finding.code, finding.subject)


def _by_rank(findings: Iterable[Finding]) -> dict[int, tuple[Finding, ...]]:
    """One node's findings split by severity rank, each part in (code, subject) order."""
    parts: dict[int, list[Finding]] = {}
    for finding in findings:
        parts.setdefault(finding.severity.rank, []).append(finding)
    return {rank: tuple(sorted(part, key=lambda f: (f.code, f.subject)))
            for rank, part in parts.items()}


def mig_devices(view: NodeView) -> int:
    """MIG devices the node advertises: ``nvidia.com/mig-*`` (mixed), or ``nvidia.com/gpu``
    when GFD names the product ``<model>-MIG-<profile>`` (single)."""
    devices = sum(e.capacity for e in view.resources.entries
                  if e.name.startswith(L.RESOURCE_MIG_PREFIX))
    if "-MIG-" in view.product:
        whole = view.resources.get(L.RESOURCE_GPU)
        devices += whole.capacity if whole is not None else 0
    return devices


def usable(view: NodeView, allocatable: int) -> int:
    """``allocatable`` GPUs as the header's ``GPUs x/y`` and the node list's GPUS cell count
    them: none on a NotReady node. The scheduler places nothing there, and the figure is the
    kubelet's last report; counting it made ``GPUs 32/40`` hold NotReady nodes' ``8/8``."""
    return allocatable if view.ready else 0


#: the GPU-health codes: the findings the metrics pane explains
_HEALTH = frozenset(c.code for c in CATALOGUE.values() if c.pane is Pane.METRICS)


def unhealthy_gpus(view: NodeView) -> int:
    """GPUs of the node with a GPU-health finding of warning or worse: each GPU a finding
    names once, and one for a finding about the node's GPUs as a whole (one missing)."""
    named, whole = set(), 0
    for finding in view.findings:
        if finding.code in _HEALTH and finding.severity.rank >= 2:
            if finding.subject:
                named.add(finding.subject)
            else:
                whole = 1
    return len(named) + whole


def _contribution(view: NodeView) -> tuple[int, int, int, int, int, int, int]:
    return (int(view.ready), int(view.cordoned), max(view.resources.capacity, view.gpu_count),
            usable(view, view.resources.allocatable), int(bool(view.findings)),
            mig_devices(view),
            unhealthy_gpus(view))


class Fleet:
    """The node views of the last build and what is derived from all of them."""

    def __init__(self) -> None:
        self._views: dict[str, NodeView] = {}
        self._mapping: Mapping[str, NodeView] = _EMPTY_NODES
        self._order_changed = False
        self._sums = [0, 0, 0, 0, 0, 0, 0]
        self._names: dict[int, list[str]] = {rank: [] for rank in _RANKS}
        self._parts: dict[int, dict[str, tuple[Finding, ...]]] = {r: {} for r in _RANKS}
        self._rank_cache: dict[int, tuple[Finding, ...]] = {}
        self._cluster: tuple[Finding, ...] = ()
        self._findings: tuple[Finding, ...] = ()
        self._nodes_changed = True
        self._findings_changed = True

    def fork(self) -> Fleet:
        """An independent copy sharing the (immutable) views and findings."""
        other = copy.copy(self)
        other._views, other._sums = dict(self._views), list(self._sums)
        other._names = {rank: list(names) for rank, names in self._names.items()}
        other._parts = {rank: dict(parts) for rank, parts in self._parts.items()}
        other._rank_cache = dict(self._rank_cache)
        return other

    @property
    def views(self) -> Mapping[str, NodeView]:
        """Node name -> view, by name (read only)."""
        return self._views

    def put(self, name: str, view: NodeView | None) -> None:
        """Node ``name`` now looks like ``view`` (None: it is gone)."""
        old = self._views.get(name)
        if old is view:
            return
        self._nodes_changed = self._findings_changed = True
        if old is not None:
            self._move(_contribution(old), -1)
            self._put_findings(name, old.findings, -1)
        if view is None:
            del self._views[name]
            return
        if old is None:
            self._order_changed = True
        self._views[name] = view
        self._move(_contribution(view), 1)
        self._put_findings(name, view.findings, 1)

    def nodes(self) -> Mapping[str, NodeView]:
        """The read-only node mapping, by name; the previous one when nothing changed."""
        if self._order_changed:
            self._views = {name: self._views[name] for name in sorted(self._views)}
            self._order_changed = False
        if self._nodes_changed:
            self._mapping = MappingProxyType(dict(self._views))
            self._nodes_changed = False
        return self._mapping

    def counts(self, upgrades_in_progress: int) -> SnapshotCounts:
        """Fleet figures for the header."""
        ready, cordoned, total, allocatable, with_findings, mig, unhealthy = self._sums
        return SnapshotCounts(
            gpu_nodes=len(self._views), nodes_ready=ready, nodes_cordoned=cordoned,
            gpus_total=total, gpus_allocatable=allocatable,
            nodes_with_findings=with_findings, upgrades_in_progress=upgrades_in_progress,
            mig_devices=mig, gpus_with_health_findings=unhealthy)

    def nodes_with(self, rank: int) -> int:
        """How many nodes have a finding of severity ``rank`` (3 critical .. 1 info)."""
        return len(self._names[rank])

    def names_with(self, rank: int) -> frozenset[str]:
        """The nodes that have a finding of severity ``rank``."""
        return frozenset(self._names[rank])

    def findings(self, cluster: Sequence[Finding]) -> tuple[Finding, ...]:
        """Every finding in snapshot order: node findings merged with ``cluster`` ones."""
        ordered = tuple(sorted(cluster, key=finding_order))
        if not self._findings_changed and ordered == self._cluster:
            return self._findings
        self._findings_changed = False
        self._cluster = ordered
        result: list[Finding] = []
        for rank in _RANKS:
            result.extend(f for f in ordered if f.severity.rank == rank)
            if rank not in self._rank_cache:
                parts = self._parts[rank]
                self._rank_cache[rank] = tuple(
                    f for name in self._names[rank] for f in parts[name])
            result.extend(self._rank_cache[rank])
        self._findings = tuple(result)
        return self._findings

    def _move(self, contribution: tuple[int, ...], sign: int) -> None:
        for index, value in enumerate(contribution):
            self._sums[index] += sign * value

    def _put_findings(self, name: str, findings: Sequence[Finding], sign: int) -> None:
        if not findings:
            return
        for rank, part in _by_rank(findings).items():
            names, parts = self._names[rank], self._parts[rank]
            self._rank_cache.pop(rank, None)
            if sign < 0:
                del names[bisect_left(names, name)]
                del parts[name]
            else:
                insort(names, name)
                parts[name] = part
