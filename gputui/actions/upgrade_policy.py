"""Cluster-wide driver-upgrade actions: the driver version and every ``upgradePolicy`` field.

Each edits the ClusterPolicy (or the NVIDIADriver that owns the nodes, see
:mod:`gputui.actions.upgrade_common`) with one JSON merge patch that carries the object's
resourceVersion, so a policy someone changed since the plan answers 409 and is re-planned
instead of overwritten. All are :attr:`Risk.CLUSTER_WIDE`: the operator types the new value
(or the context name for switches) to confirm.

Field rules are upstream's (k8s-operator-libs ``api/upgrade/v1alpha1/upgrade_spec.go``):
``maxParallelUpgrades`` >= 0 (0 = unlimited), ``maxUnavailable`` an int or ``N%`` (rounded
up against the managed nodes), every ``timeoutSeconds`` >= 0 (0 = forever), selectors are
label-selector strings.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions import upgrade_common as U
from gputui.actions import upgrade_values as V
from gputui.actions.base import (
    ActionDefaults,
    ClusterWriter,
    ParamSpec,
    Permission,
    Plan,
    ProgressCallback,
    Result,
    Risk,
    Scope,
)
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, UpgradePolicy
from gputui.domain.upgrade import resolve_max_unavailable
from gputui.domain.upgrade_state import UpgradeState, holds_slot

PERMISSIONS = (Permission("get", "clusterpolicies", "nvidia.com"),
               Permission("patch", "clusterpolicies", "nvidia.com"),
               Permission("get", "nvidiadrivers", "nvidia.com"),
               Permission("patch", "nvidiadrivers", "nvidia.com"))


#: :attr:`Edit.path` of the driver version (not under ``upgradePolicy``)
VERSION = ("version",)


@dataclass(frozen=True)
class Edit:
    """What one policy action changes: the patch value under the target, and its story."""

    path: tuple[str, ...]
    value: Any
    summary: str
    title: str
    confirm: str
    impact: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    blocked: str | None = None


class PolicyAction(ActionDefaults):
    """Shared plan/apply of the cluster-wide actions; subclasses say what they edit."""

    scope: Scope = Scope.CLUSTER
    risk: Risk = Risk.CLUSTER_WIDE
    permissions: tuple[Permission, ...] = PERMISSIONS

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        raise NotImplementedError

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """One merge patch on the ClusterPolicy/NVIDIADriver, with its impact."""
        target = U.resolve_target(snapshot, targets)
        if isinstance(target, str):
            return Plan(self.id, self.title, blocked=target, params=dict(params),
                        basis=snapshot)
        edit = self.edit(snapshot, target, params)
        # the version sits beside upgradePolicy, every other edit inside it
        path = target.version_path if edit.path == VERSION else (*target.policy_path, *edit.path)
        change = target.change(path, edit.value, f"{target.describe()}: {edit.summary}")
        return Plan(self.id, f"{edit.title} on {target.describe()}", changes=(change,),
                    steps=(f"1. patch {target.describe()}: {edit.summary}",),
                    impact=edit.impact, warnings=edit.warnings, risk=self.risk,
                    confirm_text=edit.confirm, blocked=edit.blocked, params=dict(params),
                    basis=snapshot)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """Send the one patch; a 409 answers with a fresh plan instead."""
        change = plan.changes[0]
        sent = U.send_policy_change(plan, change, writer,
                                    lambda snap: self.plan(snap, plan.targets, plan.params))
        if isinstance(sent, Result):
            return sent
        return Result(ok=True, summary=change.summary, details=(change.kubectl,))


def policy_of(target: U.DriverTarget) -> UpgradePolicy:
    return target.policy or UpgradePolicy(auto_upgrade=target.kind == U.NVIDIA_DRIVER)


def text_param(params: Mapping[str, Any], name: str, default: str = "") -> str:
    return str(params.get(name, default)).strip()


def rollout_line(snapshot: ClusterSnapshot, target: U.DriverTarget,
                 policy: UpgradePolicy) -> str:
    """How a new version rolls: every node, N at a time, within maxUnavailable."""
    nodes = target.nodes(snapshot)
    if not policy.auto_upgrade:
        return (f"autoUpgrade is off: the driver DaemonSet takes the new version, but none of "
                f"the {len(nodes)} nodes is upgraded until its driver pod is deleted by hand "
                "(or autoUpgrade is turned on)")
    cap = resolve_max_unavailable(policy.max_unavailable, len(nodes))
    if cap is None:
        return (f"maxUnavailable {policy.max_unavailable!r} is neither a number nor a "
                "percentage: the upgrade controller rejects it and no node will roll until "
                "it is fixed")
    per = policy.max_parallel_upgrades or len(nodes)
    at_once = max(1, min(per, cap)) if nodes else 0
    waves = math.ceil(len(nodes) / at_once) if at_once else 0
    parallel = str(policy.max_parallel_upgrades) if policy.max_parallel_upgrades else "unlimited"
    return (f"autoUpgrade is on: every one of the {len(nodes)} nodes will roll, up to "
            f"{at_once} at a time (maxParallelUpgrades {parallel}, maxUnavailable "
            f"{policy.max_unavailable} = {cap} nodes): about {waves} waves")


def held_and_failed(snapshot: ClusterSnapshot, target: U.DriverTarget) -> tuple[str, ...]:
    """Warnings about nodes the roll will not move: held, failed."""
    nodes = target.nodes(snapshot)
    held = sorted(n.name for n in nodes if n.upgrade_skip)
    failed = sorted(n.name for n in nodes if n.upgrade_state == UpgradeState.FAILED)
    lines = []
    if held:
        lines.append(f"{len(held)} node(s) held ({L.UPGRADE_SKIP}=true) stay on the old "
                     f"driver: {', '.join(held[:5])}")
    if failed:
        lines.append(f"{len(failed)} node(s) in upgrade-failed hold upgrade slots: "
                     f"{', '.join(failed[:5])}")
    return tuple(lines)


class SetDriverVersion(PolicyAction):
    id: str = "upgrade-driver-version"
    title: str = "upgrade: set driver version"
    tooltip: str = ("Set the driver version on the ClusterPolicy (or the NVIDIADriver owning the "
                    "node); with autoUpgrade on every node rolls to it.")
    aliases: tuple[str, ...] = ("driver-version",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("version", "New driver version (image tag)", validate=V.check_version,
                  default=lambda snap, targets: _current_version(snap, targets)),)

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        version = text_param(params, "version")
        error = V.check_version(version)
        current = target.current_version or "?"
        blocked = error or (f"{target.describe()} already has version {version}"
                            if version == target.current_version else None)
        policy = policy_of(target)
        impact = (rollout_line(snapshot, target, policy),
                  "to try one node first, use 'upgrade: canary' (holds every other node)")
        return Edit(VERSION, version, f"driver version {current} -> {version}",
                    f"Set driver version {version}", version, impact,
                    held_and_failed(snapshot, target), blocked)


def _current_version(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str:
    target = U.resolve_target(snapshot, targets)
    return target.current_version if isinstance(target, U.DriverTarget) else ""


class ToggleAutoUpgrade(PolicyAction):
    id: str = "upgrade-auto-toggle"
    title: str = "upgrade: toggle autoUpgrade"
    tooltip: str = "Switch the driver upgrade controller on or off (upgradePolicy.autoUpgrade)."
    aliases: tuple[str, ...] = ("auto-upgrade",)

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        policy = policy_of(target)
        new = not policy.auto_upgrade
        nodes = target.nodes(snapshot)
        impact: tuple[str, ...]
        if new:
            outdated = sorted(n.name for n in nodes if n.driver_outdated)
            impact = ((f"the upgrade controller starts: {len(outdated)} of {len(nodes)} nodes "
                       "run an out-of-date driver pod and will roll"),
                      rollout_line(snapshot, target, replace(policy, auto_upgrade=True)))
            warnings = held_and_failed(snapshot, target)
        else:
            moving = sorted(n.name for n in nodes
                            if holds_slot(n.upgrade_state))
            impact = (("the upgrade controller stops and removes the upgrade-state label "
                       f"from all {len(nodes)} nodes"),)
            warnings = (((f"{len(moving)} node(s) are mid-upgrade and stay as they are now "
                          f"(cordoned nodes stay cordoned): {', '.join(moving[:5])}"),)
                        if moving else ())
        word = "on" if new else "off"
        return Edit(("autoUpgrade",), new, f"autoUpgrade {_on(policy.auto_upgrade)} -> {word}",
                    f"Turn autoUpgrade {word}", snapshot.context or word, impact, warnings)


def _on(value: bool) -> str:
    return "on" if value else "off"
