"""What a released canary pool's nodes wait on, in the upgrade controller's own figures.

While a pool rolls, most of its nodes sit in ``upgrade-required`` until a slot frees
(``maxParallelUpgrades``, ``maxUnavailable``): that is the roll going as planned, so the
progress says "waiting for a slot (1 of 1 in use)" with the figures the controller uses
(:mod:`gputui.domain.upgrade_slots`, after k8s-operator-libs
``pkg/upgrade/common_manager.go``, ``GetUpgradesAvailable``), and keeps "blocked" for a queue
that cannot move by itself: slots held by ``upgrade-failed`` nodes, ``maxUnavailable`` used
up by nodes down outside the upgrade (the causes of the ``upgrade-stalled`` finding).

The figures are read fresh from the server (every managed node of the plan's driver object,
and its upgrade policy), and only in a poll where some node of the pool waits in
``upgrade-required``: one GET per managed node then, like the pool's own reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gputui.actions import upgrade_common as U
from gputui.actions.base import ClusterWriter, JsonObj, Plan, WriteError
from gputui.actions.guard import WriteInterrupted
from gputui.domain import labels as L
from gputui.domain.policy import read_upgrade_policy
from gputui.domain.upgrade_slots import Slots, compute_slots, needs_operator, waiting_for_slot
from gputui.domain.upgrade_state import UpgradeState, mid_upgrade


@dataclass(frozen=True)
class NodeRead:
    """The parts of a fresh Node object the slot figures need."""

    state: str
    cordoned: bool
    ready: bool

    @property
    def down(self) -> bool:
        return self.cordoned or not self.ready


def read_node(obj: JsonObj) -> NodeRead:
    """``obj`` (a Node as the server sent it) reduced to state, cordon and readiness."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    conditions = (obj.get("status") or {}).get("conditions") or []
    ready = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                for c in conditions)
    return NodeRead(str(labels.get(L.UPGRADE_STATE, "")),
                    bool((obj.get("spec") or {}).get("unschedulable")), ready)


@dataclass(frozen=True)
class Figures:
    """One poll's slot figures, and why the queue cannot move by itself (None: it waits)."""

    slots: Slots
    max_unavailable_raw: str
    stuck: str | None

    def waiting(self) -> str:
        """"waiting for a slot (1 of 1 in use)" and the like."""
        s = self.slots
        return waiting_for_slot(s.in_progress, s.max_parallel, s.failed, s.unavailable,
                                s.max_unavailable, self.max_unavailable_raw)


class SlotReader:
    """Reads the figures for the plan's driver object (ClusterPolicy or NVIDIADriver)."""

    def __init__(self, plan: Plan, writer: ClusterWriter):
        self.writer = writer
        basis = plan.basis
        target = U.resolve_target(basis, plan.targets) if basis is not None else None
        self.target = target if isinstance(target, U.DriverTarget) else None
        self.managed: tuple[str, ...] = tuple(sorted(
            n.name for n in self.target.nodes(basis))) if self.target and basis else ()

    def figures(self, fresh: Mapping[str, NodeRead]) -> Figures | None:
        """The figures now (``fresh``: nodes already read this poll); None when the driver
        object, its policy or a node cannot be read (a plan without its snapshot, a 404,
        a 403): the node is then said to wait in its state, without figures."""
        if self.target is None:
            return None
        try:
            obj = self.writer.get(self.target.kind, self.target.name)
            nodes = {name: fresh.get(name) or read_node(self.writer.get("Node", name))
                     for name in self.managed}
        except WriteInterrupted:
            raise  # stopped: the run ends as it would on any read
        except WriteError:  # the figures only explain a wait: without them it is still said
            return None
        spec: object = obj
        for key in self.target.policy_path:
            spec = spec.get(key) if isinstance(spec, dict) else None
        policy = read_upgrade_policy(spec if isinstance(spec, dict) else {},
                                     self.target.describe())
        return figures_from(nodes, policy.max_parallel_upgrades, policy.max_unavailable)


def figures_from(nodes: Mapping[str, NodeRead], max_parallel: int, raw: str) -> Figures:
    """The figures of the managed ``nodes`` under ``maxParallelUpgrades`` and the raw
    ``maxUnavailable``; down nodes in an idle state are down outside the upgrade."""
    slots = compute_slots({n: r.state for n, r in nodes.items()},
                          [n for n, r in nodes.items() if r.down], max_parallel, raw)
    outside = sum(1 for r in nodes.values() if r.down and not mid_upgrade(r.state))
    return Figures(slots, raw, needs_operator(slots, outside))


def describe(names: Sequence[str], reads: Mapping[str, NodeRead],
             figures: Figures | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(waiting, blocked) lines for the pool's nodes not yet done; ``figures`` is None when
    no node waits in ``upgrade-required`` (or they could not be read)."""
    waiting: list[str] = []
    blocked: list[str] = []
    for name in names:
        read = reads[name]
        if read.state != UpgradeState.REQUIRED or figures is None:
            waiting.append(f"{name}: {read.state or 'no upgrade state yet'}")
        elif figures.slots.available > 0 or read.cordoned:
            waiting.append(f"{name}: upgrade-required, starts at the controller's next pass")
        elif figures.stuck:
            blocked.append(f"{name}: {figures.waiting()}: {figures.stuck}")
        else:
            waiting.append(f"{name}: {figures.waiting()}")
    return tuple(waiting), tuple(blocked)
