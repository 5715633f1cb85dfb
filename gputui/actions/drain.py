"""Drain (k9s key ``r``): cordon, then evict the node's pods through the Eviction API.

The plan is made from the snapshot (which knows the GPU pods, the ones an operator cares
about); the apply lists every pod on the node fresh, sorts them by kubectl's rules
(:mod:`gputui.actions.drain_rules`) and runs the eviction loop
(:mod:`gputui.actions.drain_run`). "Drained" is said only when the pods are gone.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.base import (
    PATCH_NODES,
    Change,
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
from gputui.actions.drain_rules import DrainOptions, PodRef, sort_pods
from gputui.actions.drain_run import EvictionLoop
from gputui.actions.guard import stop_reason, write_deadline
from gputui.actions.impact import gpu_pod_lines, nodes_of, risk_warnings, unavailable_line
from gputui.actions.node import cordon_change
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


def eviction_change(namespace: str, pod: str, kubectl: str) -> Change:
    """One policy/v1 Eviction (dry-run before the drain: a budget's refusal shows early)."""
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": namespace}}
    return Change("create", "Pod", pod, body, kubectl=kubectl,
                  summary=f"evict {namespace}/{pod}", namespace=namespace)


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
        """Cordon patches and the GPU pods' evictions; the rest is listed at apply time."""
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
        changes: list[Change] = []
        for node in known:
            kubectl = drain_kubectl(node.name, options, timeout)
            if not node.cordoned:
                changes.append(replace(cordon_change(node.name), kubectl=kubectl))
            changes += [eviction_change(p.namespace, p.name, kubectl) for p in node.gpu_pods
                        if p.phase not in ("Succeeded", "Failed")]
        line = unavailable_line(snapshot, names)
        impact = ([line] if line else []) + list(gpu_pod_lines(snapshot, names, "evicted"))
        impact.append("every other pod is evicted too, except DaemonSet and mirror pods")
        steps = ("1. cordon", ("2. list the node's pods; skip DaemonSet and mirror pods; "
                               "refuse unmanaged or emptyDir pods unless ticked"),
                 f"3. evict each pod; retry evictions a budget refuses for {timeout:g} s",
                 "4. drained when every evicted pod is gone")
        return Plan(self.id, title, tuple(names), tuple(changes), steps, tuple(impact),
                    risk_warnings(snapshot, names), self.risk, params=stored)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """The whole drain, cordon included, within its timeout (a hung server too)."""
        with write_deadline(writer, float(plan.params.get("timeout", DEFAULT_TIMEOUT))):
            return self._apply(plan, writer, progress, cancel)

    def _apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
               cancel: threading.Event) -> Result:
        """Cordon, sort every node's pods, then run the eviction loop over all of them."""
        options = drain_options(plan.params)
        label = ", ".join(plan.targets) if len(plan.targets) <= 3 else \
            f"{len(plan.targets)} nodes"
        for change in plan.changes:
            if change.verb == "patch":
                progress(Progress(f"cordon {change.name}"))
                try:
                    writer.patch(change)
                except WriteError as error:
                    return Result(False, f"{change.name} not drained: cordon failed",
                                  error=error.reason)
        pods: list[PodRef] = []
        skipped = 0
        for node in plan.targets:
            try:
                listed = writer.list_pods_on_node(node)
            except WriteError as error:
                return Result(False, f"{node} not drained: cannot list its pods",
                              error=error.reason)
            sorting = sort_pods(listed, options, lambda ns, name: _exists(
                writer, "DaemonSet", name, ns))
            if sorting.refused:
                return Result(False, f"{node} cordoned, not drained: nothing was evicted",
                              error=f"{node}: {sorting.refusal()}")
            pods += sorting.evict
            skipped += len(sorting.daemonset) + len(sorting.mirror)
        if cancel.is_set():
            return Result(False, f"drain of {label} stopped after the cordon: nothing evicted",
                          cancelled=True, interrupted=stop_reason(cancel))
        loop = EvictionLoop(writer, pods, progress, cancel,
                            float(plan.params.get("timeout", DEFAULT_TIMEOUT)), label)
        result = loop.run()
        note = f" ({skipped} DaemonSet or mirror pod{'s' if skipped != 1 else ''} skipped)"
        return Result(result.ok, result.summary + (note if skipped else ""), result.error,
                      result.details, result.cancelled, result.interrupted)


def _exists(writer: ClusterWriter, kind: str, name: str, namespace: str) -> bool:
    """Whether the server has the object; an error other than 404 counts as "exists"
    (skipping a DaemonSet pod is the safe side)."""
    try:
        writer.get(kind, name, namespace)
    except WriteError as error:
        return error.status != 404
    return True


DRAIN = DrainAction()
ACTIONS = (DRAIN,)
