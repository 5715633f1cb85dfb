"""Drain (k9s key ``r``): cordon, then evict the node's pods through the Eviction API.

The plan starts from the snapshot (the GPU pods and whose they are) and is completed from
the server (:mod:`gputui.actions.drain_plan`): every pod on the node listed fresh, sorted by
kubectl's rules (:mod:`gputui.actions.drain_rules`), one eviction per pod the drain will
evict, so the dry run and the audit log hold every write. The apply checks the pods are
still the plan's, cordons, and runs the eviction loop (:mod:`gputui.actions.drain_run`) over
exactly the plan's pods. "Drained" is said only when the pods are gone.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.base import (
    PATCH_NODES,
    ClusterWriter,
    ParamSpec,
    Permission,
    Plan,
    Progress,
    ProgressCallback,
    Result,
    Risk,
    Scope,
    WriteError,
)
from gputui.actions.drain_plan import check_unchanged, sort_node, with_pods
from gputui.actions.drain_rules import DrainOptions, Sorting
from gputui.actions.drain_run import EvictionLoop
from gputui.actions.guard import stop_reason, write_deadline
from gputui.actions.impact import gpu_pod_lines, nodes_of, risk_warnings, unavailable_line
from gputui.actions.node import UNCORDON, cordon_change
from gputui.domain.model import ClusterSnapshot

#: seconds a drain keeps retrying refused evictions (kubectl's --timeout; upgrade default)
DEFAULT_TIMEOUT = 300.0
#: the drain switches offered as one pick list: label -> (delete emptyDir data, force)
OPTIONS: Mapping[str, tuple[bool, bool]] = {
    "skip DaemonSet pods only": (False, False),
    "also delete emptyDir data": (True, False),
    "also force unmanaged pods": (False, True),
    "also delete emptyDir data and force unmanaged pods": (True, True),
}


def drain_options(params: Mapping[str, Any]) -> DrainOptions:
    """The switches the operator ticked (the first pick list entry when none)."""
    emptydir, force = OPTIONS.get(str(params.get("options", "")), (False, False))
    return DrainOptions(delete_emptydir=emptydir, force=force)


def drain_kubectl(node: str, options: DrainOptions, timeout: float) -> str:
    """The kubectl command this drain is the twin of."""
    flags = " --delete-emptydir-data" if options.delete_emptydir else ""
    flags += " --force" if options.force else ""
    return f"kubectl drain {node} --ignore-daemonsets{flags} --timeout={timeout:g}s"


def _timeout_error(value: str) -> str | None:
    try:
        seconds = float(value)
    except ValueError:
        return f"timeout {value!r}: a number of seconds"
    return None if 0 < seconds <= 86400 else "timeout: between 1 second and a day"


def _timeout_default(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str:
    return f"{DEFAULT_TIMEOUT:g}"


def _options_choices(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    return tuple(OPTIONS)


@dataclass  # not frozen: the Action protocol declares plain attributes
class DrainAction:
    """Cordon the target nodes and evict their pods (kubectl drain --ignore-daemonsets)."""

    id: str = "drain"
    title: str = "Drain"
    tooltip: str = ("Cordon, then evict the node's pods through the Eviction API, honouring "
                    "PodDisruptionBudgets (kubectl drain --ignore-daemonsets).")
    keys: str = "r"
    aliases: tuple[str, ...] = ("drain",)
    scope: Scope = Scope.NODES
    risk: Risk = Risk.DESTRUCTIVE
    permissions: tuple[Permission, ...] = (
        PATCH_NODES, Permission("list", "pods"),
        Permission("get", "daemonsets", "apps"),
        Permission("create", "pods", subresource="eviction"))
    params: tuple[ParamSpec, ...] = (
        ParamSpec("options", "Drain options", choices=_options_choices),
        ParamSpec("timeout", "Seconds to keep retrying evictions a budget refuses "
                  "(kubectl --timeout)", validate=_timeout_error, default=_timeout_default))

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """The cordons and what the snapshot knows (GPU pods and whose); the evictions are
        added by :meth:`server_plan` from the pods the server lists on each node."""
        options = drain_options(params)
        timeout = float(params.get("timeout", DEFAULT_TIMEOUT))
        known = nodes_of(snapshot, targets)
        names = [n.name for n in known]
        title = f"Drain {names[0] if len(names) == 1 else f'{len(names)} nodes'}"
        stored = {"options": str(params.get("options", next(iter(OPTIONS)))),
                  "timeout": timeout}
        if not names:
            return Plan(self.id, title, tuple(targets), blocked="nothing to do (no such node)",
                        params=stored)
        changes = [replace(cordon_change(node.name),
                           kubectl=drain_kubectl(node.name, options, timeout))
                   for node in known if not node.cordoned]
        line = unavailable_line(snapshot, names)
        impact = ([line] if line else []) + list(gpu_pod_lines(snapshot, names, "running there"))
        steps = ("1. cordon", "2. list the node's pods again: stop if they differ from the plan",
                 f"3. evict each pod; retry evictions a budget refuses for {timeout:g} s",
                 "4. drained when every evicted pod is gone")
        return Plan(self.id, title, tuple(names), tuple(changes), steps, tuple(impact),
                    risk_warnings(snapshot, names), self.risk, params=stored)

    def server_plan(self, plan: Plan, writer: ClusterWriter) -> Plan:
        """Every pod on the targets, listed from the server and sorted by kubectl's rules;
        one eviction per pod the drain will evict (the dry run checks each)."""
        options = drain_options(plan.params)
        timeout = float(plan.params.get("timeout", DEFAULT_TIMEOUT))
        kubectl = {node: drain_kubectl(node, options, timeout) for node in plan.targets}
        return with_pods(plan, writer, plan.targets, options, kubectl)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """The whole drain, cordon included, within its timeout (a hung server too)."""
        with write_deadline(writer, float(plan.params.get("timeout", DEFAULT_TIMEOUT))):
            return self._apply(plan, writer, progress, cancel)

    def _apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
               cancel: threading.Event) -> Result:
        """Check the pods are still the plan's, cordon, check again, evict exactly the plan's
        pods; a refused pod stops the drain after the cordon, as kubectl's does."""
        options = drain_options(plan.params)
        label = ", ".join(plan.targets) if len(plan.targets) <= 3 else \
            f"{len(plan.targets)} nodes"
        stale = _still_planned(plan, writer, options, cordoned=False)
        if isinstance(stale, Result):
            return stale
        for change in plan.changes:
            if change.verb == "patch":
                progress(Progress(f"cordon {change.name}"))
                try:
                    writer.patch(change)
                except WriteError as error:
                    return Result(False, f"{change.name} not drained: cordon failed",
                                  error=error.reason)
        sortings = _still_planned(plan, writer, options, cordoned=True)
        if isinstance(sortings, Result):
            return left_cordoned(sortings, plan.targets)
        evictions = {f"{c.namespace}/{c.name}" for c in plan.changes if c.verb == "create"}
        pods = [ref for s in sortings.values() for ref in s.evict if str(ref) in evictions]
        skipped = sum(len(s.daemonset) + len(s.mirror) for s in sortings.values())
        if cancel.is_set():
            return left_cordoned(Result(False, f"drain of {label} stopped after the cordon: "
                                               "nothing evicted", cancelled=True,
                                        interrupted=stop_reason(cancel)), plan.targets)
        loop = EvictionLoop(writer, pods, progress, cancel,
                            float(plan.params.get("timeout", DEFAULT_TIMEOUT)), label)
        result = loop.run()
        note = f" ({skipped} DaemonSet or mirror pod{'s' if skipped != 1 else ''} skipped)"
        return left_cordoned(Result(result.ok, result.summary + (note if skipped else ""),
                                    result.error, result.details, result.cancelled,
                                    result.interrupted), plan.targets)


def left_cordoned(result: Result, nodes: Sequence[str]) -> Result:
    """A drain that did not finish leaves its nodes cordoned: say so in the outcome (the
    notification, the dialog, the audit line) and name them, so the dialog can offer
    uncordon; a drained node stays cordoned as ``kubectl drain`` leaves it, unsaid."""
    if result.ok or not nodes:
        return result
    names = nodes[0] if len(nodes) == 1 else f"{len(nodes)} nodes"
    verb = "stays" if len(nodes) == 1 else "stay"
    return replace(result, summary=f"{result.summary}; {names} {verb} cordoned "
                                   f"(uncordon: {UNCORDON.keys or ':uncordon'})",
                   cordoned=tuple(nodes))


def _still_planned(plan: Plan, writer: ClusterWriter, options: DrainOptions, *,
                   cordoned: bool) -> dict[str, Sorting] | Result:
    """Each target's pods listed and sorted now, or the Result that ends the drain: a pod
    refused (after the cordon, as kubectl), or pods that are no longer the plan's (before
    the cordon a conflict the UI re-plans from; after it, a stop: no unplanned eviction)."""
    done = "cordoned, not drained: nothing was evicted" if cordoned else \
        "not drained: nothing was sent"
    sortings: dict[str, Sorting] = {}
    for node in plan.targets:
        try:
            sorting = sort_node(writer, node, options)
        except WriteError as error:
            return Result(False, f"{node} {done}: cannot list its pods", error=error.reason)
        if cordoned and sorting.refused:
            return Result(False, f"{node} {done}", error=f"{node}: {sorting.refusal()}")
        why = check_unchanged(plan, node, sorting)
        if why:
            return Result(False, f"{node} {done}: its pods changed since the plan",
                          error=why, conflict=not cordoned)
        sortings[node] = sorting
    return sortings


DRAIN = DrainAction()
ACTIONS = (DRAIN,)
