"""Per-node driver-upgrade actions: hold, release, request an upgrade, retry a failed one.

All are plain node label/annotation edits the upgrade controller reads (§4.1, §4.6):
* hold: label ``nvidia.com/gpu-driver-upgrade.skip=true``: a node in ``upgrade-required`` is
  skipped and never started; a node already past it carries on.
* release: remove that label.
* request: annotation ``nvidia.com/gpu-driver-upgrade-requested=true`` moves a node in ``""``
  or ``upgrade-done`` to ``upgrade-required`` even when its driver pod is current; the
  controller removes it once processed.
* retry: relabel ``upgrade-failed`` to ``upgrade-required``; the controller runs the steps
  again and skips those already done (maintainer answer, gpu-operator #2549). Sent as a JSON
  patch that first tests the state is still ``upgrade-failed``, so a node that recovered on
  its own meanwhile is not sent back.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from gputui.actions import upgrade_common as U
from gputui.actions.base import (
    PATCH_NODES,
    ActionDefaults,
    Change,
    ClusterWriter,
    Permission,
    Plan,
    ProgressCallback,
    Result,
    Risk,
    Scope,
)
from gputui.actions.impact import risk_warnings
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.domain.upgrade_advice import HOLD, RELEASE, REQUEST, RETRY, why_not
from gputui.domain.upgrade_state import UpgradeState

def _nodes(snapshot: ClusterSnapshot, targets: Sequence[str]) -> list[NodeView]:
    return [snapshot.nodes[t] for t in targets if t in snapshot.nodes]


def gpu_pod_lines(node: NodeView, limit: int = 6) -> list[str]:
    """``ns/name (Job trainer, 8 GPUs)`` for each GPU pod on the node."""
    lines = []
    for pod in node.gpu_pods[:limit]:
        owner = f"{pod.owner_kind} {pod.owner_name}" if pod.owner_kind else "no controller"
        lines.append(f"{pod.namespace}/{pod.name} ({owner}, {pod.gpus} GPU)")
    if len(node.gpu_pods) > limit:
        lines.append(f"... and {len(node.gpu_pods) - limit} more")
    return lines


class NodeUpgradeAction(ActionDefaults):
    """Shared plan/apply: one change per target node, sent in order."""

    scope: Scope = Scope.NODES
    risk: Risk = Risk.SAFE
    permissions: tuple[Permission, ...] = (PATCH_NODES,)

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        raise NotImplementedError

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        done, stopped = U.send_all(plan, writer, progress, cancel)
        if stopped is not None:
            return stopped
        return Result(ok=True, summary=f"{plan.title}: done", details=tuple(done))

    def _plan(self, snapshot: ClusterSnapshot, title: str, changes: Sequence[Change],
              skipped: Sequence[str], **extra: Any) -> Plan:
        """A plan over the nodes that need a change; ``skipped`` says why others do not."""
        blocked = None if changes else ("; ".join(skipped) or "no node selected")
        warnings = tuple(skipped) + tuple(extra.pop("warnings", ()))
        return Plan(self.id, title, targets=tuple(c.name for c in changes),
                    changes=tuple(changes), warnings=warnings, blocked=blocked,
                    basis=snapshot, **extra)


class HoldNode(NodeUpgradeAction):
    id: str = "upgrade-hold"
    title: str = "upgrade: hold node"
    tooltip: str = "Keep the node out of the driver upgrade (skip label) until released."
    aliases: tuple[str, ...] = ("hold",)

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        changes, skipped, warnings = [], [], []
        for node in _nodes(snapshot, targets):
            why = why_not(HOLD, node.upgrade_state, node.upgrade_skip)
            if node.upgrade_skip:
                skipped.append(f"{node.name} is {why}")
                continue
            if why is not None:  # the hints ask the same question (upgrade_advice)
                warnings.append(f"{node.name} is {why}")
            changes.append(U.node_labels_change(node.name, {L.UPGRADE_SKIP: "true"},
                                                f"label {L.UPGRADE_SKIP}=true"))
        return self._plan(snapshot, f"Hold {len(changes)} node(s) out of the driver upgrade",
                          changes, skipped, warnings=warnings,
                          impact=(("a held node stays in upgrade-required (on its current "
                                   "driver) and is never started until released"),))


class ReleaseNode(NodeUpgradeAction):
    id: str = "upgrade-release"
    title: str = "upgrade: release node"
    tooltip: str = "Let a held node take part in the driver upgrade again (removes the skip label)."
    aliases: tuple[str, ...] = ("release",)
    risk: Risk = Risk.DESTRUCTIVE

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        changes, skipped, impact = [], [], []
        auto = snapshot.upgrade.enabled
        for node in _nodes(snapshot, targets):
            if (why := why_not(RELEASE, node.upgrade_state, node.upgrade_skip)) is not None:
                skipped.append(f"{node.name} is {why}")
                continue
            changes.append(U.node_labels_change(node.name, {L.UPGRADE_SKIP: None},
                                                f"remove label {L.UPGRADE_SKIP}"))
            if auto and (node.upgrade_state == UpgradeState.REQUIRED or node.driver_outdated):
                pods = gpu_pod_lines(node)
                impact.append(f"{node.name} starts its driver upgrade when a slot is free: "
                              f"cordon, then its GPU pods are deleted"
                              + (f": {', '.join(pods)}" if pods else " (none now)"))
        risky = any("starts its driver upgrade" in line for line in impact)
        return self._plan(snapshot, f"Release {len(changes)} node(s) into the driver upgrade",
                          changes, skipped, impact=tuple(impact),
                          risk=Risk.DESTRUCTIVE if risky else Risk.SAFE)


class RequestUpgrade(NodeUpgradeAction):
    id: str = "upgrade-request"
    title: str = "upgrade: request node upgrade"
    tooltip: str = "Upgrade (re-install) the driver on this node now, even if it is up to date."
    aliases: tuple[str, ...] = ("request-upgrade",)
    risk: Risk = Risk.DESTRUCTIVE

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        if not snapshot.upgrade.enabled:
            return Plan(self.id, "Request a driver upgrade", targets=tuple(targets),
                        blocked=("autoUpgrade is off: the upgrade controller ignores the "
                                 "request annotation"), basis=snapshot)
        changes: list[Change] = []
        skipped, impact, warnings = [], [], []
        for node in _nodes(snapshot, targets):
            if (why := why_not(REQUEST, node.upgrade_state, node.upgrade_skip)) is not None:
                skipped.append(f"{node.name} is {why}")
                continue
            if node.upgrade_skip:
                warnings.append(f"{node.name} is held: it will wait in upgrade-required "
                                "until released")
            annotation = {L.UPGRADE_REQUESTED: "true"}
            changes.append(Change(
                verb="patch", kind="Node", name=node.name,
                body={"metadata": {"annotations": annotation}},
                kubectl=U.kubectl_annotate(node.name, annotation),
                summary=f"annotate {L.UPGRADE_REQUESTED}=true"))
            pods = gpu_pod_lines(node)
            impact.append(f"{node.name}: upgrade-required, then when a slot is free cordon, "
                          "GPU pods deleted" + (f": {', '.join(pods)}" if pods else " (none now)")
                          + ", driver pod restarted, validated, uncordoned")
        return self._plan(snapshot, f"Request a driver upgrade of {len(changes)} node(s)",
                          changes, skipped, impact=tuple(impact),
                          warnings=(*warnings, *risk_warnings(snapshot, [c.name for c in changes])),
                          risk=Risk.DESTRUCTIVE)


class RetryFailed(NodeUpgradeAction):
    id: str = "upgrade-retry"
    title: str = "upgrade: retry failed node"
    tooltip: str = ("Send an upgrade-failed node back to upgrade-required (finished steps are "
                    "skipped).")
    aliases: tuple[str, ...] = ("retry-upgrade",)
    risk: Risk = Risk.DESTRUCTIVE

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        changes: list[Change] = []
        skipped, impact = [], []
        for node in _nodes(snapshot, targets):
            if (why := why_not(RETRY, node.upgrade_state, node.upgrade_skip)) is not None:
                skipped.append(f"{node.name} is {why}")
                continue
            changes.append(_retry_change(node.name))
            impact.append(_retry_story(snapshot, node))
        return self._plan(snapshot, f"Retry the driver upgrade of {len(changes)} node(s)",
                          changes, skipped, impact=tuple(impact), risk=Risk.DESTRUCTIVE,
                          steps=(("the controller runs the upgrade again from upgrade-required;"
                                  " steps already done are skipped (the node is already "
                                  "cordoned, pods already deleted stay deleted)"),))


def _retry_change(node: str) -> Change:
    path = "/metadata/labels/" + L.UPGRADE_STATE.replace("~", "~0").replace("/", "~1")
    failed, required = UpgradeState.FAILED.value, UpgradeState.REQUIRED.value
    body = [{"op": "test", "path": path, "value": failed},
            {"op": "replace", "path": path, "value": required}]
    return Change(verb="patch", kind="Node", name=node, body=body, patch_type="json",
                  kubectl=U.kubectl_label(node, {L.UPGRADE_STATE: required}),
                  summary=f"label {L.UPGRADE_STATE}: {failed} -> {required}")


def _retry_story(snapshot: ClusterSnapshot, node: NodeView) -> str:
    status = snapshot.upgrade.nodes.get(node.name)
    event = status.last_event if status is not None else None
    step = f" in {event.previous_state}" if event is not None and event.previous_state else ""
    cause = f" ({event.cause})" if event is not None and event.cause else ""
    slot = ("already cordoned, so it proceeds without waiting for a free slot"
            if node.cordoned else "waits for a free slot")
    return (f"{node.name} failed{step}{cause}; it {slot}; unless the cause is fixed it "
            "will fail the same way again")
