"""Upgrade findings that need the cluster's slot figures: a stalled ``upgrade-required``
queue and a node held by its skip label (the whole controller blocked, ``upgrade-blocked``,
is judged in :mod:`gputui.domain.upgrade_blocked`).

A node waiting its turn behind nodes that are upgrading within the policy is a rolling
upgrade's normal life and gets no finding. A queue that cannot move by itself (autoUpgrade
off, the controller blocked, slots held by failed nodes, ``maxUnavailable`` used up by nodes
down for other reasons) is one silent failure, however many nodes wait in it: one
cluster-level ``upgrade-stalled`` once its nodes have waited ``upgrade_stalled_minutes``,
naming them (``k8s-operator-libs: pkg/upgrade/upgrade_inplace.go``,
``ProcessUpgradeRequiredNodes``; ``common_manager.go``, ``GetUpgradesAvailable``). A node
carrying ``nvidia.com/gpu-driver-upgrade.skip=true`` is skipped by that same step on
purpose (gputui's own hint recommends the label): ``info``, held by choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext
from gputui.domain.model import Finding, NodeView, Severity, UpgradeView
from gputui.domain.thresholds import SOURCES, ThresholdsLike
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_groups import Groups, owner_of, view_for
from gputui.domain.upgrade_queue_held import (
    HeldSlots,
    held_queue_finding,
    held_slots,
    slot_holders,
)
from gputui.domain.upgrade_state import UpgradeState, holds_slot, mid_upgrade

#: waiting nodes named in the message; the finding's ``nodes`` holds them all
_NAMED = 8
_FAILED_HINT = ("Fix and retry the failed nodes (relabel them upgrade-required once the cause "
                "is fixed): a failed node holds its slot until its driver pod is ready. The "
                "upgrades pane shows the slot figures.")
_DOWN_HINT = ("Uncordon or repair the nodes cordoned or NotReady outside the upgrade, or raise "
              "maxUnavailable: no node starts while they use the budget.")
_OFF_HINT = "Turn autoUpgrade back on (and sandbox workloads off) to let the queue move."
_BLOCKED_HINT = "See upgrade-blocked: the controller moves no node until that is fixed."


def _down_outside(view: UpgradeView, nodes: Mapping[str, NodeView]) -> list[str]:
    """Managed nodes cordoned or NotReady for reasons other than a running upgrade step."""
    return [name for name, status in view.nodes.items() if not mid_upgrade(status.state)
            and (n := nodes.get(name)) is not None and (n.cordoned or not n.ready)]


def _stall_cause(view: UpgradeView, node: NodeView | None,
                 down_outside: Callable[[], list[str]]) -> str | None:
    """Why the queue ``node`` waits in cannot move by itself ("failed", "down", "off",
    "blocked"), or None when the node starts by itself (a slot, or pre-cordoned)."""
    if view.blocked:
        return "blocked"
    if not view.enabled:
        return "off"
    if view.available_slots > 0 or (node is not None and node.cordoned):
        return None  # starts at the next pass (pre-cordoned nodes proceed without a slot)
    # no slot: a queue behind upgrading nodes is normal; slots held by failed nodes, or
    # maxUnavailable used up by nodes down for other reasons, do not free themselves
    # (GetUpgradesAvailable gives 0 once unavailable >= maxUnavailable, at any node count)
    if view.failed > 0:
        return "failed"
    return "down" if len(down_outside()) >= view.max_unavailable else None


def _holders(view: UpgradeView, owner: str | None, nodes: Mapping[str, NodeView],
             groups: Groups) -> str:
    """"1 failed node, 3 in wait-for-jobs-required": who holds the queue's slots (``view``
    is the whole cluster's, whose statuses a per-NVIDIADriver view lacks)."""
    counts: dict[str, int] = {}
    for name, status in view.nodes.items():
        if not holds_slot(status.state):
            continue
        node = nodes.get(name)
        if groups and (node is None or owner_of(node, groups) != owner):
            continue
        counts[status.state] = counts.get(status.state, 0) + 1
    failed = counts.pop(UpgradeState.FAILED, 0)
    parts = [f"{failed} failed node{'s' if failed != 1 else ''}"] if failed else []
    parts += [f"{n} in {state}" for state, n in sorted(counts.items())]
    return ", ".join(parts) or "no node"


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


class _Context:
    """What every queue of one build shares; the walk over all nodes happens at most once."""

    def __init__(self, view: UpgradeView, nodes: Mapping[str, NodeView], now: float,
                 minutes: float, groups: Groups) -> None:
        self.view, self.nodes, self.now, self.minutes, self.groups = (
            view, nodes, now, minutes, groups)
        self._down: list[list[str]] = []
        self._held: dict[str | None, HeldSlots | None] = {}

    def down(self) -> list[str]:
        if not self._down:
            self._down.append(_down_outside(self.view, self.nodes))
        return self._down[0]

    def held(self, owner: str | None, own: UpgradeView) -> HeldSlots | None:
        """The queue's slot holders when none frees its slot by itself (once per queue)."""
        if owner not in self._held:
            def member(node: NodeView) -> bool:
                return not self.groups or owner_of(node, self.groups) == owner
            holders = slot_holders(self.view, self.nodes, member)
            self._held[owner] = held_slots(own, holders, self.now)
        return self._held[owner]


_HINTS = {"failed": _FAILED_HINT, "down": _DOWN_HINT, "off": _OFF_HINT,
          "blocked": _BLOCKED_HINT}


def _why(cause: str, own: UpgradeView, owner: str | None, context: _Context) -> str:
    """What keeps the queue from moving, in the operator's terms."""
    if cause == "failed":
        limit = str(own.max_parallel) if own.max_parallel else "unlimited"
        return (f"{own.in_progress} of {limit} slots held by "
                f"{_holders(context.view, owner, context.nodes, context.groups)}")
    if cause == "down":
        down = sorted(context.down())
        return (f"maxUnavailable {own.max_unavailable} used up by {len(down)} node(s) "
                f"cordoned or NotReady outside the upgrade ({_names(down)})")
    if cause == "off":
        return "the upgrade controller is off (autoUpgrade false or sandbox workloads)"
    return f"blocked: {own.blocked}"


def _queue_finding(cause: str, own: UpgradeView, owner: str | None,
                   waiting: list[tuple[str, float]], context: _Context) -> Finding:
    """The one ``upgrade-stalled`` of a stalled queue, naming its waiting nodes."""
    names = sorted(name for name, _ in waiting)
    longest = max(context.now - since for _, since in waiting)
    cr = f" (NVIDIADriver {owner})" if owner else ""
    noun = "node" if len(names) == 1 else "nodes"
    past = (f", past {context.minutes:g} min, {SOURCES['upgrade_stalled_minutes']}"
            if longest >= context.minutes * 60.0 else "")
    return C.finding(
        C.UPGRADE_STALLED, None,
        f"upgrade queue stalled{cr}: {_why(cause, own, owner, context)}; {len(names)} {noun} "
        f"waiting in upgrade-required (longest {duration(longest)}{past}): {_names(names)}",
        _HINTS[cause], nodes=tuple(names))


def required_stalled(view: UpgradeView, nodes: Mapping[str, NodeView],
                     thresholds: ThresholdsLike, now: float,
                     groups: Groups | None = None) -> list[Finding]:
    """One cluster-level ``upgrade-stalled`` per stalled queue (per NVIDIADriver when there
    are several), listing the ``upgrade-required`` nodes held in it past the threshold.
    Nodes held by their skip label are left to :func:`held_by_choice`."""
    context = _Context(view, nodes, now, thresholds.upgrade_stalled_minutes, groups or {})
    limit = thresholds.upgrade_stalled_minutes * 60.0
    queues: dict[tuple[str | None, str], list[tuple[str, float]]] = {}
    owned: dict[str | None, UpgradeView] = {}
    for name in view.lanes.get(UpgradeState.REQUIRED, ()):
        status = view.nodes.get(name)
        if status is None or status.skip or status.since is None:
            continue
        node = nodes.get(name)
        owner = owner_of(node, context.groups) if node is not None and context.groups else None
        own = view_for(node, view, context.groups) if node is not None else view
        cause = _stall_cause(own, node, context.down)
        # every slot holder stuck (upgrade_queue_held): said at once, not after the threshold
        stuck = (cause in (None, "failed") and not (node is not None and node.cordoned)
                 and context.held(owner, own) is not None)
        if cause is None and stuck:
            cause = "held"
        if not stuck and now - status.since < limit:
            continue
        if cause is not None:
            owned[owner] = own
            queues.setdefault((owner, cause), []).append((name, status.since))
    found = []
    for (owner, cause), waiting in sorted(queues.items(), key=lambda kv: (kv[0][0] or "",
                                                                          kv[0][1])):
        held = context.held(owner, owned[owner]) if cause == "held" else None
        found.append(_queue_finding(cause, owned[owner], owner, waiting, context)
                     if held is None else
                     held_queue_finding(held, owned[owner], owner, waiting, now))
    return found


def held_by_choice(ctx: NodeContext) -> list[Finding]:
    """A node in ``upgrade-required`` held by ``nvidia.com/gpu-driver-upgrade.skip=true``:
    ``ProcessUpgradeRequiredNodes`` skips it on purpose, so ``info``, since when the label
    was set (its managedFields time) when that is known."""
    node = ctx.node
    if node.upgrade_state != UpgradeState.REQUIRED or not node.upgrade_skip:
        return []
    since = ctx.label_times.get(L.UPGRADE_SKIP)
    when = (f" since {datetime.fromtimestamp(since, tz=UTC):%Y-%m-%d %H:%M} UTC "
            f"({ctx.age(since)})" if since is not None else "")
    return [ctx.finding(
        C.UPGRADE_STALLED,
        f"{node.name} held by choice{when}: {L.UPGRADE_SKIP}=true keeps it on its old driver "
        "while the upgrade waits for it",
        f"Remove the label when the node may upgrade (kubectl label node {node.name} "
        f"{L.UPGRADE_SKIP}-); it then waits for a slot like any other.", severity=Severity.INFO)]
