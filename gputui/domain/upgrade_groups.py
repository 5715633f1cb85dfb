"""One upgrade per NVIDIADriver: which CR owns a node, and each CR's own slot figures.

With several NVIDIADriver CRs the operator runs the state machine once per CR, over the
nodes that CR owns, with that CR's ``upgradePolicy`` (gpu-operator v26.7
``internal/nvidiadriver/nvidiadriver.go`` ``AssignOwners``; domain reference §3, §4.3). So
``maxParallelUpgrades`` and ``maxUnavailable`` count per CR: a node waits for a slot of its
own CR, never for another CR's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from gputui.domain.model import NodeView, UpgradePolicy, UpgradeView
from gputui.domain.upgrade_slots import slots_from_counts
from gputui.domain.upgrade_state import UpgradeState

Groups = Mapping[str, tuple[UpgradePolicy, Mapping[str, Any]]]


def owner_of(node: NodeView, groups: Groups) -> str | None:
    """The NVIDIADriver that owns ``node``: its owner label (v26.7+), else the one CR whose
    ``nodeSelector`` matches, else the default CR."""
    if node.driver_owner_cr in groups:
        return node.driver_owner_cr
    matching = [name for name, (_, info) in groups.items() if info["selector"] and all(
        node.labels.get(k) == v for k, v in info["selector"].items())]
    if len(matching) == 1:
        return matching[0]
    default = [name for name, (_, info) in groups.items() if info["default"]]
    return default[0] if len(default) == 1 else None


def group_views(nodes: Iterable[NodeView], groups: Groups, enabled: bool,
                blocked: str | None) -> Mapping[str, UpgradeView]:
    """Each CR's figures over the managed nodes it owns (no lanes, no statuses)."""
    if not groups:
        return MappingProxyType({})
    counts: dict[str, dict[str, int]] = {name: {} for name in groups}
    down: dict[str, int] = {name: 0 for name in groups}
    for node in nodes:
        owner = owner_of(node, groups)
        if owner is None:
            continue
        state_counts = counts[owner]
        state_counts[node.upgrade_state] = state_counts.get(node.upgrade_state, 0) + 1
        down[owner] += int(node.cordoned or not node.ready)
    views = {}
    for name, (policy, _) in groups.items():
        slots = slots_from_counts(counts[name], down[name], policy.max_parallel_upgrades,
                                  policy.max_unavailable)
        views[name] = UpgradeView(
            policy=policy, enabled=enabled and policy.auto_upgrade, total=slots.total,
            in_progress=slots.in_progress, failed=counts[name].get(UpgradeState.FAILED, 0),
            pending=counts[name].get(UpgradeState.REQUIRED, 0),
            done=counts[name].get(UpgradeState.DONE, 0), max_parallel=policy.max_parallel_upgrades,
            max_unavailable=slots.max_unavailable, unavailable=slots.unavailable,
            available_slots=0 if policy.max_unavailable_error else slots.available,
            blocked=policy.max_unavailable_error or blocked)
    return MappingProxyType(views)


def view_for(node: NodeView, view: UpgradeView, groups: Groups) -> UpgradeView:
    """The figures that govern ``node``: its CR's when there are several, else ``view``."""
    owner = owner_of(node, groups) if groups else None
    return view.groups.get(owner, view) if owner is not None else view
