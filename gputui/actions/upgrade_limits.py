"""The upgrade policy's limits and pod handling: ``maxParallelUpgrades``, ``maxUnavailable``,
``waitForCompletion``, ``podDeletion`` and ``drain``.

Raising a limit is the change operators get wrong under pressure, so the plan does the
controller's slot arithmetic (§4.5, :func:`gputui.domain.upgrade.slots_from_counts`) with the
new value and shows how many more nodes the next cycle may take down, against
``maxUnavailable``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gputui.actions import upgrade_common as U
from gputui.actions import upgrade_drain
from gputui.actions import upgrade_values as V
from gputui.actions.base import ClusterWriter, ParamSpec, Plan
from gputui.actions.upgrade_policy import Edit, PolicyAction, policy_of, rollout_line, text_param
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, UpgradePolicy
from gputui.domain.selectors import matches
from gputui.domain.upgrade import slots_from_counts
from gputui.domain.upgrade_state import UpgradeState

BOOLS = ("true", "false")


def _current(read: Callable[[UpgradePolicy], Any]
             ) -> Callable[[ClusterSnapshot, Sequence[str]], str]:
    """A ParamSpec default: the field's value in the policy now."""
    def default(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str:
        target = U.resolve_target(snapshot, targets)
        if isinstance(target, str):
            return ""
        value = read(policy_of(target))
        return str(value).lower() if isinstance(value, bool) else str(value)
    return default


def _bools(_snapshot: ClusterSnapshot, _targets: Sequence[str]) -> tuple[str, ...]:
    return BOOLS


def unavailability(snapshot: ClusterSnapshot, target: U.DriverTarget,
                   new: UpgradePolicy) -> tuple[str, ...]:
    """What the next controller cycle may do under ``new`` compared with now (§4.5)."""
    nodes = target.nodes(snapshot)
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.upgrade_state] = counts.get(node.upgrade_state, 0) + 1
    down = sum(1 for n in nodes if n.cordoned or not n.ready)
    old = policy_of(target)
    before = slots_from_counts(counts, down, old.max_parallel_upgrades, old.max_unavailable)
    after = slots_from_counts(counts, down, new.max_parallel_upgrades, new.max_unavailable)
    waiting = sum(1 for n in nodes
                  if n.upgrade_state == UpgradeState.REQUIRED and not n.upgrade_skip)
    start_before, start_after = min(before.available, waiting), min(after.available, waiting)
    lines = [(f"{after.in_progress} node(s) upgrading now; the next cycle may start "
              f"{start_after} of {waiting} waiting node(s) (with the current policy: "
              f"{start_before})"),
             (f"unavailable nodes: {after.unavailable} now, up to "
              f"{after.unavailable + start_after} after that cycle, against maxUnavailable "
              f"{after.max_unavailable} ({new.max_unavailable} of {after.total} nodes)")]
    if new.auto_upgrade:
        lines.append(rollout_line(snapshot, target, new))
    return tuple(lines)


def _cap_warning(snapshot: ClusterSnapshot, target: U.DriverTarget,
                 new: UpgradePolicy) -> tuple[str, ...]:
    total = len(target.nodes(snapshot))
    cap = slots_from_counts({"": total}, 0, 0, new.max_unavailable).max_unavailable
    if cap == 0 and total:
        return ((f"maxUnavailable {new.max_unavailable} is 0 nodes: no node can start an "
                 "upgrade"),)
    if new.max_parallel_upgrades == 0 or new.max_parallel_upgrades > cap:
        return ((f"maxUnavailable caps it: at most {cap} node(s) unavailable at once "
                 f"({new.max_unavailable} of {total})"),)
    return ()


class SetMaxParallel(PolicyAction):
    id: str = "upgrade-max-parallel"
    title: str = "upgrade: set maxParallelUpgrades"
    tooltip: str = ("How many nodes the driver upgrade takes at once (0 = no limit but "
                    "maxUnavailable).")
    aliases: tuple[str, ...] = ("max-parallel",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("value", "maxParallelUpgrades (0 = unlimited)", validate=V.check_count,
                  default=_current(lambda p: p.max_parallel_upgrades)),)

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        text = text_param(params, "value")
        error = V.check_count(text)
        old = policy_of(target)
        value = int(text) if error is None else old.max_parallel_upgrades
        new = replace(old, max_parallel_upgrades=value)
        same = f"maxParallelUpgrades is already {value}" if value == old.max_parallel_upgrades \
            else None
        return Edit(("maxParallelUpgrades",), value,
                    f"maxParallelUpgrades {old.max_parallel_upgrades} -> {value}",
                    f"Set maxParallelUpgrades {value}", str(value),
                    unavailability(snapshot, target, new), _cap_warning(snapshot, target, new),
                    error or same)


class SetMaxUnavailable(PolicyAction):
    id: str = "upgrade-max-unavailable"
    title: str = "upgrade: set maxUnavailable"
    tooltip: str = "How many upgrade-managed nodes may be unavailable at once (a number or N%)."
    aliases: tuple[str, ...] = ("max-unavailable",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("value", "maxUnavailable (a number, or a percentage such as 25%)",
                  validate=V.check_max_unavailable,
                  default=_current(lambda p: p.max_unavailable)),)

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        text = text_param(params, "value")
        value = V.parse_max_unavailable(text)
        old = policy_of(target)
        new = replace(old, max_unavailable=str(value if value is not None else
                                               old.max_unavailable))
        blocked = V.check_max_unavailable(text) or (
            f"maxUnavailable is already {value}" if str(value) == old.max_unavailable else None)
        return Edit(("maxUnavailable",), value,
                    f"maxUnavailable {old.max_unavailable} -> {value}",
                    f"Set maxUnavailable {value}", str(value),
                    unavailability(snapshot, target, new), _cap_warning(snapshot, target, new),
                    blocked)


def _first_error(*errors: str | None) -> str | None:
    return next((e for e in errors if e), None)


def _gpu_pods_matching(snapshot: ClusterSnapshot, target: U.DriverTarget,
                       selector: str) -> tuple[int, int]:
    """GPU pods (and their nodes) on the target's nodes that ``selector`` selects."""
    hits = [(n.name, p.name) for n in target.nodes(snapshot) for p in n.gpu_pods
            if selector and matches(selector, p.labels)]
    return len(hits), len({node for node, _ in hits})


class SetWaitForCompletion(PolicyAction):
    id: str = "upgrade-wait-for-completion"
    title: str = "upgrade: set waitForCompletion"
    tooltip: str = "Which jobs a node waits for before its GPU pods are deleted, and for how long."
    aliases: tuple[str, ...] = ("wait-for-completion",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("podSelector", "Pods to wait for (label selector, empty = none)",
                  validate=V.check_selector,
                  default=_current(lambda p: p.wait_for_completion_selector)),
        ParamSpec("timeoutSeconds", "Give up waiting after (seconds, 0 = never)",
                  validate=V.check_count,
                  default=_current(lambda p: p.wait_for_completion_timeout)),
    )

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        old = policy_of(target)
        selector = text_param(params, "podSelector")
        timeout = text_param(params, "timeoutSeconds", "0")
        error = _first_error(V.check_selector(selector), V.check_count(timeout))
        seconds = int(timeout) if timeout.isdigit() else 0
        pods, nodes = _gpu_pods_matching(snapshot, target, selector)
        wait = ("never gives up" if seconds == 0 else
                f"gives up after {seconds} s and deletes the GPU pods anyway")
        impact = ((f"a node in wait-for-jobs-required waits for pods matching {selector!r} "
                   f"and {wait}; {pods} GPU pod(s) on {nodes} node(s) match now")
                  if selector else "nodes no longer wait for jobs: GPU pods are deleted "
                  "as soon as a node is cordoned",)
        return Edit(("waitForCompletion",), {"podSelector": selector, "timeoutSeconds": seconds},
                    (f"waitForCompletion podSelector {old.wait_for_completion_selector!r} -> "
                     f"{selector!r}, timeoutSeconds {old.wait_for_completion_timeout} -> "
                     f"{seconds}"),
                    "Set waitForCompletion", snapshot.context or "yes", impact, (), error)


class SetPodDeletion(PolicyAction):
    id: str = "upgrade-pod-deletion"
    title: str = "upgrade: set podDeletion"
    tooltip: str = "How the upgrade deletes GPU pods: force unmanaged pods, emptyDir, timeout."
    aliases: tuple[str, ...] = ("pod-deletion",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("force", "Delete GPU pods no controller manages (force)", choices=_bools,
                  validate=V.check_bool, default=_current(lambda p: p.pod_deletion_force)),
        ParamSpec("deleteEmptyDir", "Delete GPU pods that use emptyDir", choices=_bools,
                  validate=V.check_bool,
                  default=_current(lambda p: p.pod_deletion_delete_empty_dir)),
        ParamSpec("timeoutSeconds", "Give up deleting after (seconds, 0 = never)",
                  validate=V.check_count, default=_current(lambda p: p.pod_deletion_timeout)),
    )

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        old = policy_of(target)
        force = text_param(params, "force").lower()
        empty = text_param(params, "deleteEmptyDir").lower()
        timeout = text_param(params, "timeoutSeconds", "300")
        error = _first_error(V.check_bool(force), V.check_bool(empty), V.check_count(timeout))
        value = {"force": force == "true", "deleteEmptyDir": empty == "true",
                 "timeoutSeconds": int(timeout) if timeout.isdigit() else 0}
        warnings = []
        if value["force"]:
            warnings.append("force: GPU pods that no controller manages are deleted and "
                            "never come back")
        if value["deleteEmptyDir"]:
            warnings.append("deleteEmptyDir: GPU pods lose their emptyDir data")
        drain = "drain-required" if old.drain_enable else "upgrade-failed"
        impact = ((f"a node whose GPU pods cannot all be deleted within "
                   f"{value['timeoutSeconds'] or 'unlimited'} s goes {drain}"),)
        summary = (f"podDeletion force {str(old.pod_deletion_force).lower()} -> {force}, "
                   f"deleteEmptyDir {str(old.pod_deletion_delete_empty_dir).lower()} -> {empty}, "
                   f"timeoutSeconds {old.pod_deletion_timeout} -> {value['timeoutSeconds']}")
        return Edit(("podDeletion",), value, summary, "Set podDeletion",
                    snapshot.context or "yes", impact, tuple(warnings), error)


class SetDrain(PolicyAction):
    id: str = "upgrade-drain"
    title: str = "upgrade: set drain"
    tooltip: str = "Whether a node whose GPU pods cannot be deleted is drained, and how."
    aliases: tuple[str, ...] = ("upgrade-drain",)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("enable", "Drain nodes whose GPU pods cannot be deleted", choices=_bools,
                  validate=V.check_bool, default=_current(lambda p: p.drain_enable)),
        ParamSpec("force", "Drain pods no controller manages (force)", choices=_bools,
                  validate=V.check_bool, default=_current(lambda p: p.drain_force)),
        ParamSpec("podSelector", "Pods to drain (label selector, empty = all)",
                  validate=V.check_selector, default=_current(lambda p: p.drain_selector)),
        ParamSpec("deleteEmptyDir", "Drain pods that use emptyDir", choices=_bools,
                  validate=V.check_bool, default=_current(lambda p: p.drain_delete_empty_dir)),
        ParamSpec("timeoutSeconds", "Give up draining after (seconds, 0 = never)",
                  validate=V.check_count, default=_current(lambda p: p.drain_timeout)),
    )

    def edit(self, snapshot: ClusterSnapshot, target: U.DriverTarget,
             params: Mapping[str, Any]) -> Edit:
        value, error = _drain_value(params)
        selector = value["podSelector"]
        which = f"pods matching {selector!r}" if selector else "every pod"
        impact = ((f"a node whose GPU pods cannot all be deleted is drained: {which}, except "
                   f"DaemonSet pods and pods labelled {L.UPGRADE_DRAIN_SKIP}=true")
                  if value["enable"] else
                  "a node whose GPU pods cannot all be deleted goes upgrade-failed",)
        warnings = (("force: pods no controller manages are deleted and never come back",)
                    if value["enable"] and value["force"] else ())
        summary = ", ".join(f"{k} {v}" for k, v in value.items())
        return Edit(("drain",), value, f"drain {summary}", "Set upgrade drain",
                    snapshot.context or "yes", impact, warnings, error)

    def server_plan(self, plan: Plan, writer: ClusterWriter) -> Plan:
        """The pods the operator's drain would refuse with these settings on the nodes
        nearest their drain, listed from the server (:mod:`gputui.actions.upgrade_drain`)."""
        value, error = _drain_value(plan.params)
        return plan if error else upgrade_drain.check(plan, writer, value)


def _drain_value(params: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The ``drain`` object the settings make, and the first invalid setting's error."""
    texts = {k: text_param(params, k) for k in ("enable", "force", "deleteEmptyDir")}
    selector = text_param(params, "podSelector")
    timeout = text_param(params, "timeoutSeconds", "300")
    error = _first_error(*(V.check_bool(v) for v in texts.values()),
                         V.check_selector(selector), V.check_count(timeout))
    value: dict[str, Any] = {k: v.lower() == "true" for k, v in texts.items()}
    value.update(podSelector=selector, timeoutSeconds=int(timeout) if timeout.isdigit() else 0)
    return value, error
