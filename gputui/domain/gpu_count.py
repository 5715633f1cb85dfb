"""``gpu-count-dropped``: a node that came back with fewer GPUs than it should have.

A GPU that fell off the bus (XID 79) is often simply gone after the node reboots: the driver
enumerates 7 GPUs, GFD relabels ``nvidia.com/gpu.count=7``, capacity and allocatable say 7,
and every per-node check agrees with itself (``../shared/domain/gpu-operator.md`` §7). Only
the node's pool siblings (same instance type and GPU product: a cloud instance type has a
fixed GPU count) or its own earlier count show the loss.

Counts are physical GPUs (:func:`gputui.domain.mig.physical_gpu_count`): MIG devices and
shared replicas are not GPUs, a ``-SHARED`` or ``-MIG-<profile>`` product is the same
product, and a node without a count (joining, or GFD not run yet after a reboot) is not
judged and does not count as a sibling. A pool of one has nobody to compare with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from gputui.domain import catalogue as C
from gputui.domain.inputs import GpuHealth, GpuId
from gputui.domain.model import Finding, NodeView

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
BETA_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"
#: GFD's machine type (DMI product name): the instance type where no cloud labels one
GPU_MACHINE = "nvidia.com/gpu.machine"

HINT = ("A GPU fell off the bus and the node came back without it: every per-node figure "
        "agrees with the smaller count, so nothing else shows it. Cordon and drain the node, "
        "then have the GPU (or its riser/baseboard) serviced; a reboot rarely brings it "
        "back.")

Pool = tuple[str, str]


def pool_of(view: NodeView) -> Pool | None:
    """(instance type, product) of the node; None when either is unknown."""
    labels = view.labels
    machine = (labels.get(INSTANCE_TYPE) or labels.get(BETA_INSTANCE_TYPE)
               or labels.get(GPU_MACHINE) or "")
    product = view.product.partition("-MIG-")[0].removesuffix("-SHARED")
    return (machine, product) if machine and product else None


def _steady(view: NodeView) -> bool:
    """Whether the node's count may be remembered as what it had: not while the MIG manager
    re-partitions it, nor under ``single`` (its physical count is derived from the MIG
    config, and one odd moment would be remembered for the whole session)."""
    return view.mig_state not in ("pending", "rebooting") and "-MIG-" not in view.product


@dataclass(frozen=True, slots=True)
class _Node:
    pool: Pool | None
    count: int | None


def _gone_words(gone: tuple[GpuId, ...]) -> str:
    names = []
    for gpu in gone:
        parts = [p for p in (gpu.uuid, f"PCI {gpu.pci_bus_id}" if gpu.pci_bus_id else "") if p]
        names.append(f"GPU {gpu.gpu}" + (f" ({', '.join(parts)})" if parts else ""))
    return f"; gone: {'; '.join(names)}" if names else ""


class CountTracker:
    """Each node's physical GPU count by pool, and the most it had, kept by difference."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self._pools: dict[Pool, dict[str, int]] = {}
        self._peak: dict[str, int] = {}
        self._modes: dict[Pool, Counter[int]] = {}
        #: bumped by every change the findings depend on; the last answer is kept for it
        self._version = 0
        self._answer: tuple[int, object, dict[str, Finding]] | None = None

    def fork(self) -> CountTracker:
        """An independent copy (the records are immutable)."""
        other = CountTracker()
        other._nodes, other._peak = dict(self._nodes), dict(self._peak)
        other._pools = {pool: dict(nodes) for pool, nodes in self._pools.items()}
        return other

    def put(self, name: str, view: NodeView | None, physical: int | None) -> None:
        """Node ``name`` now looks like ``view`` with ``physical`` GPUs (None: unknown;
        a None view: the node is gone, and what it had is forgotten)."""
        if view is None:
            old = self._nodes.pop(name, None)
            self._peak.pop(name, None)
            if old is not None:
                self._version += 1
                self._leave(name, old)
            return
        new = _Node(pool_of(view), physical if physical and physical > 0 else None)
        old = self._nodes.get(name)
        if old == new:
            return
        self._version += 1
        if old is not None:
            self._leave(name, old)
        self._nodes[name] = new
        if new.count is not None and _steady(view):
            self._peak[name] = max(self._peak.get(name, 0), new.count)
            if new.pool is not None:
                self._pools.setdefault(new.pool, {})[name] = new.count
                self._modes.pop(new.pool, None)

    def keep(self, names: Mapping[str, object]) -> None:
        """Forget the nodes not in ``names`` (a full rebuild: deleted nodes are not told)."""
        for name in [n for n in self._nodes if n not in names]:
            self.put(name, None, None)

    def _leave(self, name: str, old: _Node) -> None:
        if old.pool is not None and old.pool in self._pools:
            self._pools[old.pool].pop(name, None)
            self._modes.pop(old.pool, None)

    def _siblings(self, pool: Pool, name: str, count: int) -> tuple[int, int] | None:
        """(the siblings' usual count, how many siblings) when it is above ``count``."""
        counts = self._modes.get(pool)
        if counts is None:
            counts = self._modes[pool] = Counter(self._pools.get(pool, {}).values())
        others = counts.copy()
        others[count] -= 1
        others = +others
        if not others:
            return None
        most = max(others.values())
        usual = max(c for c, n in others.items() if n == most)
        return (usual, sum(others.values())) if usual > count else None

    def findings(self, health: Mapping[str, GpuHealth]) -> dict[str, Finding]:
        """node -> its ``gpu-count-dropped`` finding, for every node short of GPUs.

        Asked at every build: the answer is kept while no node's count or pool changed and
        the metrics are the same reading (a build with nothing changed walked 5,000 nodes
        and copied a counter for each: 24 ms where the whole build took 2)."""
        if self._answer is not None and self._answer[0] == self._version \
                and self._answer[1] is health:
            return self._answer[2]
        found = {}
        # the most GPUs any node of each pool has: a node with that many, and never more
        # than it has now, is short of nothing (the usual case, judged without a count)
        tops = {pool: max(counts.values()) for pool, counts in self._pools.items() if counts}
        for name, node in self._nodes.items():
            if node.count is None:
                continue
            read = health.get(name)
            if (node.pool is None or node.count >= tops.get(node.pool, 0)) \
                    and self._peak.get(name, 0) <= node.count and (read is None or not read.gone):
                continue
            finding = self._finding(name, node, node.count, read)
            if finding is not None:
                found[name] = finding
        self._answer = (self._version, health, found)
        return found

    def _finding(self, name: str, node: _Node, count: int,
                 health: GpuHealth | None) -> Finding | None:
        gone = health.gone if health is not None else ()
        reported = health.gpus_reported if health is not None else 0
        # GPUs the metrics saw on it: a node replaced under the same name has all new
        # UUIDs (as many gone as there are now), which is no loss
        seen = reported + len(gone) if 0 < len(gone) < reported else 0
        earlier = max(self._peak.get(name, 0), seen)
        siblings = self._siblings(node.pool, name, count) if node.pool is not None else None
        if siblings is None and earlier <= count:
            return None
        parts = []
        if siblings is not None and node.pool is not None:
            usual, many = siblings
            parts.append(f"its {many} pool sibling{'' if many == 1 else 's'} "
                         f"({node.pool[0]}, {node.pool[1]}) have {usual}")
        if earlier > count:
            parts.append(f"it had {earlier} earlier")
        return C.finding(C.GPU_COUNT_DROPPED, name,
                         f"{count} GPU{'' if count == 1 else 's'} where {' and '.join(parts)}"
                         f"{_gone_words(gone)}", HINT)


def with_drops(views: Mapping[str, NodeView], found: Mapping[str, Finding],
               before: Collection[str]) -> dict[str, NodeView]:
    """The views whose ``gpu-count-dropped`` changes: ``found`` put on, and taken off the
    nodes in ``before`` (those that had one) that no longer have one."""
    changed = {}
    for name in sorted({*before, *found}):
        view = views.get(name)
        if view is None:
            continue
        new = found.get(name)
        kept = tuple(f for f in view.findings if f.code != C.GPU_COUNT_DROPPED)
        findings = tuple(sorted(kept + ((new,) if new is not None else ()),
                                key=lambda f: -f.severity.rank))
        if findings != view.findings:
            changed[name] = replace(view, findings=findings,
                                    worst=findings[0].severity if findings else None)
    return changed
