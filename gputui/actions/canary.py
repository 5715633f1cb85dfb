"""The canary driver roll-out as one guided action (journey 3).

1. hold every node the new version would roll except the canary (skip label
   ``nvidia.com/gpu-driver-upgrade.skip=true``; nodes someone else held stay held at the end);
2. set the driver version on the ClusterPolicy (or the owning NVIDIADriver), with the
   object's resourceVersion (409: nothing more is sent, and a fresh plan comes back);
3. watch the canary go through the upgrade and reach ``upgrade-done`` on a driver pod of the
   new version with its validator passing; ``upgrade-failed`` stops here and says so, every
   hold left in place so nothing else rolls;
4. release the holds pool by pool (the canary's pool first), waiting for each pool to reach
   ``upgrade-done`` before the next; a failure stops the release.

Progress is reported throughout; the operator can stop between polls, and the result says
what was done and which holds remain. Each hold also carries the label ``gputui/held-by=canary``
so that ``:release-canary`` releases exactly the nodes a canary held, never a hold someone
else set. Before ``y`` the plan asks the server which GPU pods the upgrade's deletion or
drain would not remove, and says how the roll would end (:mod:`gputui.actions.canary_risks`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from gputui.actions import canary_risks
from gputui.actions import canary_watch as W
from gputui.actions import upgrade_common as U
from gputui.actions import upgrade_values as V
from gputui.actions.base import (
    PATCH_NODES,
    Action,
    ClusterWriter,
    ParamSpec,
    Permission,
    Plan,
    ProgressCallback,
    Result,
    Risk,
    Scope,
)
from gputui.actions.impact import risk_warnings
from gputui.actions.upgrade_policy import PERMISSIONS, held_and_failed, policy_of
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.domain.upgrade_state import mid_upgrade


#: the label that marks a hold a canary roll set (its value), which :release-canary removes
HELD_BY = W.HELD_BY
CANARY = "canary"


def pools_in_order(nodes: Sequence[NodeView], canary: NodeView) -> list[tuple[str, list[str]]]:
    """(pool, node names) with the canary's pool first, then pools by name."""
    pools: dict[str, list[str]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        pools.setdefault(node.pool or "(no pool)", []).append(node.name)
    first = canary.pool or "(no pool)"
    return sorted(pools.items(), key=lambda item: (item[0] != first, item[0]))


class CanaryUpgrade:
    id: str = "upgrade-canary"
    title: str = "upgrade: canary"
    tooltip: str = ("Roll a new driver to this node first: hold all others, set the version, "
                    "watch it pass, then release the others pool by pool.")
    keys: str = ""
    aliases: tuple[str, ...] = ("canary",)
    scope: Scope = Scope.NODES
    risk: Risk = Risk.CLUSTER_WIDE
    permissions: tuple[Permission, ...] = (*PERMISSIONS, PATCH_NODES,
                                           Permission("get", "nodes"), Permission("list", "pods"))
    params: tuple[ParamSpec, ...] = (
        ParamSpec("version", "New driver version (image tag)", validate=V.check_version,
                  default=lambda snap, targets: _current(snap, targets)),)
    #: seconds between polls while watching (tests shorten it)
    poll_seconds: float = 10.0

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """Holds for the others, the version patch, and the roll-out order."""
        version = str(params.get("version", "")).strip()
        target = U.resolve_target(snapshot, targets)
        blocked = self._blocked(snapshot, targets, target, version)
        if blocked or isinstance(target, str):
            return Plan(self.id, f"Canary driver {version}", targets=tuple(targets),
                        blocked=blocked or str(target), params=dict(params), basis=snapshot)
        canary = snapshot.nodes[targets[0]]
        others = [n for n in target.nodes(snapshot) if n.name != canary.name]
        to_hold = [n for n in others if not n.upgrade_skip]
        changes = [U.node_labels_change(n.name, {L.UPGRADE_SKIP: "true", HELD_BY: CANARY},
                                        f"hold: label {L.UPGRADE_SKIP}=true") for n in to_hold]
        if canary.upgrade_skip:
            changes.append(U.node_labels_change(canary.name, {L.UPGRADE_SKIP: None},
                                                f"release the canary: remove {L.UPGRADE_SKIP}"))
        changes.append(target.change(target.version_path, version,
                                     f"{target.describe()}: driver version "
                                     f"{target.current_version or '?'} -> {version}"))
        pools = pools_in_order(to_hold, canary)
        return Plan(self.id, f"Canary driver {version} on {canary.name}", targets=(canary.name,),
                    changes=tuple(changes), steps=_steps(canary, to_hold, pools, target, version),
                    impact=_impact(snapshot, target, canary, to_hold),
                    warnings=(*_warnings(snapshot, target, others),
                              *risk_warnings(snapshot, [canary.name])),
                    risk=Risk.CLUSTER_WIDE,
                    confirm_text=version, basis=snapshot,
                    params={"version": version, "pools": [[p, names] for p, names in pools]})

    def _blocked(self, snapshot: ClusterSnapshot, targets: Sequence[str],
                 target: U.DriverTarget | str, version: str) -> str | None:
        if len(targets) != 1 or targets[0] not in snapshot.nodes:
            return "choose exactly one canary node"
        if isinstance(target, str):
            return target
        if V.check_version(version):
            return V.check_version(version)
        if version == target.current_version:
            return f"{target.describe()} already has version {version}"
        if targets[0] not in {n.name for n in target.nodes(snapshot)}:
            return (f"{targets[0]} runs no driver pod of {target.describe()}: the upgrade "
                    "controller does not manage it")
        if not policy_of(target).auto_upgrade:
            return ("autoUpgrade is off: no node would roll; turn it on first "
                    "('upgrade: toggle autoUpgrade')")
        return None

    def server_plan(self, plan: Plan, writer: ClusterWriter) -> Plan:
        """The GPU pods the upgrade's deletion or drain would not remove, and how the roll
        would end, asked of the server before ``y`` (:mod:`gputui.actions.canary_risks`)."""
        return canary_risks.check(plan, writer)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """Holds, version, canary, then the pools; see the module docstring."""
        run = W.CanaryRun(plan, writer, progress, cancel, self.poll_seconds,
                          lambda snap: self.plan(snap, plan.targets, {
                              "version": plan.params["version"]}))
        return run.run()


def _current(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str:
    target = U.resolve_target(snapshot, targets)
    return target.current_version if isinstance(target, U.DriverTarget) else ""


def _steps(canary: NodeView, held: Sequence[NodeView], pools: Sequence[tuple[str, list[str]]],
           target: U.DriverTarget, version: str) -> tuple[str, ...]:
    lines = [f"1. hold {len(held)} node(s) ({L.UPGRADE_SKIP}=true)",
             f"2. set the driver version {version} on {target.describe()}",
             (f"3. watch {canary.name} reach upgrade-done on {version} with its validator "
              "passing (stop, holds kept, if it fails)")]
    for index, (pool, names) in enumerate(pools, start=4):
        lines.append(f"{index}. release pool {pool} ({len(names)} node(s)), wait until "
                     "they are upgrade-done")
    return tuple(lines)


def _impact(snapshot: ClusterSnapshot, target: U.DriverTarget, canary: NodeView,
            held: Sequence[NodeView]) -> tuple[str, ...]:
    policy = policy_of(target)
    pods = ", ".join(f"{p.namespace}/{p.name}" for p in canary.gpu_pods[:6]) or "none now"
    wait = (f"; it first waits for pods matching {policy.wait_for_completion_selector!r}"
            if policy.wait_for_completion_selector else "")
    return (f"{canary.name} upgrades first: cordoned, its GPU pods deleted ({pods}){wait}",
            (f"then {len(held)} node(s) roll pool by pool, up to "
             f"{policy.max_parallel_upgrades or 'unlimited'} at a time within maxUnavailable "
             f"{policy.max_unavailable}"))


def _warnings(snapshot: ClusterSnapshot, target: U.DriverTarget,
              others: Sequence[NodeView]) -> tuple[str, ...]:
    lines = list(held_and_failed(snapshot, target))
    moving = [n.name for n in others if mid_upgrade(n.upgrade_state)]
    if moving:
        lines.append(f"{len(moving)} node(s) are already mid-upgrade and carry on despite a "
                     f"hold: {', '.join(moving[:5])}")
    return tuple(lines)


class ReleaseCanaryHolds:
    """Undo the holds a canary roll left (it stopped, failed or was stopped): one command."""

    id: str = "upgrade-release-canary"
    title: str = "upgrade: release canary holds"
    tooltip: str = ("Release every node a canary roll held (label gputui/held-by=canary): "
                    "they take part in the driver upgrade again; holds others set stay.")
    keys: str = ""
    aliases: tuple[str, ...] = ("release-canary",)
    scope: Scope = Scope.CLUSTER
    risk: Risk = Risk.DESTRUCTIVE
    permissions: tuple[Permission, ...] = (PATCH_NODES,)
    params: tuple[ParamSpec, ...] = ()

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        held = sorted(n.name for n in snapshot.nodes.values()
                      if n.labels.get(HELD_BY) == CANARY)
        changes = tuple(U.node_labels_change(name, {L.UPGRADE_SKIP: None, HELD_BY: None},
                                             f"release: remove {L.UPGRADE_SKIP}")
                        for name in held)
        auto = snapshot.upgrade.enabled
        impact = ((f"{len(held)} node(s) take part in the driver upgrade again"
                   + (": with autoUpgrade on, those on an old driver roll, cordoned and "
                      "their GPU pods deleted, maxParallelUpgrades at a time" if auto else "")),)
        return Plan(self.id, f"Release {len(held)} node(s) a canary roll held",
                    targets=tuple(held), changes=changes, impact=impact,
                    blocked=None if held else "no node is held by a canary roll",
                    risk=Risk.DESTRUCTIVE, basis=snapshot)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        done, stopped = U.send_all(plan, writer, progress, cancel)
        if stopped is not None:
            return stopped
        return Result(ok=True, summary=f"released {len(done)} node(s)", details=tuple(done))


ACTIONS: tuple[Action, ...] = (CanaryUpgrade(), ReleaseCanaryHolds())
