"""The upgrade view kept up to date by difference (same answers as ``build_upgrade_view``).

Rebuilding lanes, slot figures and 5,000 wait reasons on every snapshot made a one-node
change cost as much as the whole cluster. :class:`UpgradeTracker` keeps the managed nodes per
state (sorted lanes, counts, the down set) and the per-node statuses, and recomputes only:
the nodes that changed; the ``upgrade-required`` nodes when the cluster figures their reason
quotes changed; and the nodes in active states, whose reasons quote the clock.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from gputui.domain.model import (
    DaemonSetSummary,
    NodeUpgradeStatus,
    NodeView,
    UpgradeEvent,
    UpgradePolicy,
    UpgradeView,
)
from gputui.domain.upgrade import (
    blocked_reason,
    is_managed,
    status_reason,
)
from gputui.domain.upgrade_groups import Groups, group_views, view_for
from gputui.domain.upgrade_reasons import state_since
from gputui.domain.upgrade_slots import slots_from_counts
from gputui.domain.upgrade_state import UpgradeState, lane_index, mid_upgrade

#: states whose wait reason never quotes the clock (the rest are recomputed every build)
_EMPTY: Mapping[str, NodeUpgradeStatus] = MappingProxyType({})


class UpgradeTracker:
    """Managed nodes by state, and their statuses, updated node by node."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a full build follows)."""
        self._nodes: dict[str, NodeView] = {}
        self._down: set[str] = set()
        self._lanes: dict[str, list[str]] = {}
        self._lane_view: Mapping[str, tuple[str, ...]] | None = None
        self._statuses: dict[str, NodeUpgradeStatus] = {}
        self._status_view: Mapping[str, NodeUpgradeStatus] | None = None
        self._dirty: set[str] = set()
        self._figures: tuple[object, ...] | None = None
        self._groups: Groups = {}

    def fork(self) -> UpgradeTracker:
        """An independent copy sharing the (immutable) views and statuses; the read-only
        views it hands out are made from copies, so they are shared as they are."""
        other = copy.copy(self)
        other._nodes, other._down = dict(self._nodes), set(self._down)
        other._lanes = {state: list(names) for state, names in self._lanes.items()}
        other._statuses, other._dirty = dict(self._statuses), set(self._dirty)
        other._groups = dict(self._groups)
        return other

    def put(self, name: str, view: NodeView | None) -> None:
        """Node ``name`` now looks like ``view`` (None: it is gone)."""
        old = self._nodes.pop(name, None)
        if old is not None:
            lane = self._lanes[old.upgrade_state]
            del lane[bisect_left(lane, name)]
            if not lane:
                del self._lanes[old.upgrade_state]
            self._down.discard(name)
            self._lane_view = None
        if view is not None and is_managed(view):
            self._nodes[name] = view
            insort(self._lanes.setdefault(view.upgrade_state, []), name)
            if view.cordoned or not view.ready:
                self._down.add(name)
            self._lane_view = None
        if (old is None) != (name not in self._nodes):
            self._status_view = None  # membership changed: the mapping is rebuilt in order
        self._dirty.add(name)

    def view(self, policy: UpgradePolicy | None, sandbox: bool,
             daemonsets: Sequence[DaemonSetSummary], events: Mapping[str, UpgradeEvent],
             now: float, groups: Groups | None = None) -> UpgradeView:
        """The upgrade view for the nodes put so far (``groups``: one per NVIDIADriver;
        their figures need a walk over the managed nodes, done only when there are some)."""
        if policy is None:
            self._figures = None
            return UpgradeView()
        counts = {state: len(names) for state, names in self._lanes.items()}
        slots = slots_from_counts(counts, len(self._down), policy.max_parallel_upgrades,
                                  policy.max_unavailable)
        view = UpgradeView(
            policy=policy, enabled=policy.auto_upgrade and not sandbox, total=slots.total,
            in_progress=slots.in_progress, failed=counts.get(UpgradeState.FAILED, 0),
            pending=counts.get(UpgradeState.REQUIRED, 0), done=counts.get(UpgradeState.DONE, 0),
            max_parallel=policy.max_parallel_upgrades, max_unavailable=slots.max_unavailable,
            unavailable=slots.unavailable,
            available_slots=0 if policy.max_unavailable_error else slots.available,
            lanes=self._lanes_view(),
            blocked=policy.max_unavailable_error or blocked_reason(daemonsets),
            groups=group_views(self._nodes.values(), groups or {}, not sandbox,
                               blocked_reason(daemonsets)))
        self._groups = groups or {}
        return replace(view, nodes=self._statuses_view(view, policy, events, now))

    def _lanes_view(self) -> Mapping[str, tuple[str, ...]]:
        """State -> names, states in lane order then unknown ones sorted."""
        if self._lane_view is None:
            order = sorted(self._lanes, key=lambda s: (lane_index(s), s))
            self._lane_view = MappingProxyType(
                {state: tuple(self._lanes[state]) for state in order})
        return self._lane_view

    def _to_recompute(self, view: UpgradeView, policy: UpgradePolicy) -> set[str]:
        """Dirty nodes, clock-bound nodes, and the required ones when their figures moved."""
        names = {n for n in self._dirty if n in self._nodes}
        self._dirty = set()
        for state, lane in self._lanes.items():
            if mid_upgrade(state):
                names.update(lane)
        figures = (policy, view.blocked, view.enabled, view.available_slots, view.pending,
                   view.unavailable, view.max_unavailable, view.slot_line, view.groups)
        if figures != self._figures:
            self._figures = figures
            names.update(self._lanes.get(UpgradeState.REQUIRED, ()))
        return names

    def _statuses_view(self, view: UpgradeView, policy: UpgradePolicy,
                       events: Mapping[str, UpgradeEvent],
                       now: float) -> Mapping[str, NodeUpgradeStatus]:
        changed = False
        for name in self._to_recompute(view, policy):
            node, event = self._nodes[name], events.get(name)
            own = view_for(node, view, self._groups)
            reason = status_reason(node, own, own.policy or policy, event, now)
            status = NodeUpgradeStatus(
                node=name, state=node.upgrade_state, since=state_since(node, event),
                skip=node.upgrade_skip, wait_reason=reason, last_event=event)
            if self._statuses.get(name) != status:
                self._statuses[name] = status
                changed = True
        if self._status_view is not None and not changed:
            return self._status_view
        if self._status_view is None:  # membership changed: drop the gone, keep name order
            self._statuses = {n: self._statuses[n] for n in sorted(self._nodes)}
        self._status_view = MappingProxyType(dict(self._statuses)) if self._statuses else _EMPTY
        return self._status_view
