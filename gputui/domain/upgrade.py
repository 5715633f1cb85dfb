"""The driver upgrade view (§4): slot math as the controller does it, and per-node reasons.

The controller's arithmetic (§4.5) is easy to get subtly wrong, and it is what operators
argue about at 3 a.m. ("why is nothing moving?"), so it lives in small pure functions with
the library's exact rules (:mod:`gputui.domain.upgrade_slots`), per NVIDIADriver when there
are several (:mod:`gputui.domain.upgrade_groups`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from gputui.domain import labels as L
from gputui.domain.model import (
    DaemonSetSummary,
    DriverOwnership,
    NodeUpgradeStatus,
    NodeView,
    UpgradeEvent,
    UpgradePolicy,
    UpgradeView,
)
from gputui.domain.upgrade_events import failure_summary
from gputui.domain.upgrade_groups import Groups, group_views, view_for
from gputui.domain.upgrade_reasons import active_wait_reason, state_since
from gputui.domain.upgrade_slots import (
    Slots,
    compute_slots,
    resolve_max_unavailable,
    slots_from_counts,
    waiting_for_slot,
)
from gputui.domain.upgrade_state import UpgradeState, lane_index

__all__ = ["Slots", "blocked_reason", "build_upgrade_view", "compute_slots", "is_managed",
           "resolve_max_unavailable", "slots_from_counts", "status_reason"]


def blocked_reason(daemonsets: Sequence[DaemonSetSummary]) -> str | None:
    """Why the controller makes no transition at all: a driver DS with unscheduled pods."""
    for ds in daemonsets:
        if ds.operand == "driver" and ds.unscheduled != 0:
            pods = ds.desired - ds.unscheduled
            return (f"driver DaemonSet {ds.name} owns {pods} pods for {ds.desired} desired "
                    "(BuildState: \"driver DaemonSet should not have unscheduled pods\"): the "
                    "upgrade controller moves no node until they match")
    return None


def _required_reason(node: NodeView, view: UpgradeView, policy: UpgradePolicy) -> str:
    if node.upgrade_skip:
        return f"held: {L.UPGRADE_SKIP}=true"
    if view.blocked:
        return "blocked: " + view.blocked
    if not view.enabled:
        return "upgrade controller off (autoUpgrade false or sandbox workloads)"
    if view.available_slots > 0:
        if view.pending > view.available_slots:
            return (f"{view.available_slots} slot(s) free for {view.pending} waiting nodes: "
                    "starts when the controller picks it")
        return f"slot free ({view.available_slots} available): starts next cycle"
    if node.cordoned:
        return "no slot, but already cordoned: proceeds anyway"
    return waiting_for_slot(view.in_progress, view.max_parallel, view.failed,
                            view.unavailable, view.max_unavailable, policy.max_unavailable)


def status_reason(node: NodeView, view: UpgradeView, policy: UpgradePolicy,
            event: UpgradeEvent | None, now: float) -> str:
    state = node.upgrade_state
    if state == UpgradeState.REQUIRED:
        return _required_reason(node, view, policy)
    if state == UpgradeState.FAILED:
        failed = failure_summary(event)
        told = f" {failed}" if failed else ""
        return f"failed{told} (holds a slot; relabel to upgrade-required to retry)"
    return active_wait_reason(node, policy, now)


def _lanes(states: Mapping[str, str]) -> Mapping[str, tuple[str, ...]]:
    order = sorted(set(states.values()), key=lambda s: (lane_index(s), s))
    return MappingProxyType({state: tuple(sorted(n for n, s in states.items() if s == state))
                             for state in order})


def is_managed(node: NodeView) -> bool:
    """In the upgrade controller's managed set (§4.3): it runs an operator driver pod.

    A node whose driver pod is being recreated keeps its state label, so an operator-owned
    node with a state label counts too (it would otherwise blink out of the lanes).
    """
    stage = node.pipeline.stage("driver")
    if stage is not None and stage.pod is not None:
        return True
    return bool(node.upgrade_state) and node.driver_ownership is DriverOwnership.OPERATOR


def build_upgrade_view(nodes: Sequence[NodeView], policy: UpgradePolicy | None,
                       sandbox: bool, daemonsets: Sequence[DaemonSetSummary],
                       events: Mapping[str, UpgradeEvent], now: float,
                       groups: Groups | None = None) -> UpgradeView:
    """The upgrade view over every managed node (``groups``: one upgrade per NVIDIADriver)."""
    managed = [n for n in nodes if is_managed(n)]
    if policy is None:
        return UpgradeView()
    states = {n.name: n.upgrade_state for n in managed}
    down = [n.name for n in managed if n.cordoned or not n.ready]
    slots = compute_slots(states, down, policy.max_parallel_upgrades, policy.max_unavailable)
    blocked = policy.max_unavailable_error or blocked_reason(daemonsets)
    enabled = policy.auto_upgrade and not sandbox
    view = UpgradeView(
        policy=policy, enabled=enabled, total=slots.total,
        in_progress=slots.in_progress,
        failed=sum(1 for s in states.values() if s == UpgradeState.FAILED),
        pending=sum(1 for s in states.values() if s == UpgradeState.REQUIRED),
        done=sum(1 for s in states.values() if s == UpgradeState.DONE),
        max_parallel=policy.max_parallel_upgrades, max_unavailable=slots.max_unavailable,
        unavailable=slots.unavailable,
        available_slots=0 if policy.max_unavailable_error else slots.available,
        lanes=_lanes(states), blocked=blocked,
        groups=group_views(managed, groups or {}, not sandbox, blocked_reason(daemonsets)))
    statuses = {}
    for n in sorted(managed, key=lambda n: n.name):
        own = view_for(n, view, groups or {})
        own_policy = own.policy or policy
        statuses[n.name] = NodeUpgradeStatus(
            node=n.name, state=n.upgrade_state, since=state_since(n, events.get(n.name)),
            skip=n.upgrade_skip,
            wait_reason=status_reason(n, own, own_policy, events.get(n.name), now),
            last_event=events.get(n.name))
    return _with_nodes(view, statuses)


def _with_nodes(view: UpgradeView, statuses: Mapping[str, NodeUpgradeStatus]) -> UpgradeView:
    return replace(view, nodes=MappingProxyType(dict(statuses)))
