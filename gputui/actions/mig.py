"""MIG layout changes (§5): set ``nvidia.com/mig.config`` to a config the node's MIG manager
offers, directly or by the safe path.

The MIG manager does not evict GPU workloads (gpu-operator #262): changing the layout under a
running job kills its GPU access. So there are two actions:
* ``mig-config``: the label alone, planned as destructive, naming the GPU pods (and their
  owners) that will lose their GPUs;
* ``mig-config-safe``: the maintainers' procedure as one action (see
  :mod:`gputui.actions.mig_steps`): cordon, wait until GPU pods are gone (or drain them), set
  the label, wait for ``nvidia.com/mig.config.state=success`` (or report ``failed`` with the
  MIG manager's log), uncordon.

Both clear ``nvidia.com/mig.config.state`` in the same patch as the new config, so the state
read afterwards is the MIG manager's answer to this change (a config that is already in
effect answers ``success`` without passing through ``pending``, per mig-parted's
``Reconfigure.Run``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from gputui.actions import mig_steps
from gputui.actions import upgrade_common as U
from gputui.actions import upgrade_values as V
from gputui.actions.base import (
    PATCH_NODES,
    Action,
    ActionDefaults,
    Change,
    ClusterWriter,
    ParamSpec,
    Permission,
    Plan,
    ProgressCallback,
    Result,
    Risk,
    Scope,
)
from gputui.actions.drain import DEFAULT_TIMEOUT, drain_kubectl, drain_options
from gputui.actions.drain_plan import describe, evictions, list_sorted
from gputui.actions.impact import risk_warnings, unavailable_line
from gputui.actions.mig_steps import GPU_POD_MODES, drain_mode_options
from gputui.actions.node import cordon_change
from gputui.actions.upgrade_node import gpu_pod_lines
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, NodeView


def offered(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    """Configs every target's MIG manager offers (its ConfigMap), in the first one's order."""
    lists = [snapshot.mig.nodes[t].available_configs for t in targets if t in snapshot.mig.nodes]
    if not lists:
        return ()
    return tuple(c for c in lists[0] if all(c in other for other in lists[1:]))


def check_config(text: str) -> str | None:
    value = text.strip()
    if not value:
        return "choose a MIG config"
    if not V.label_value_ok(value):
        return f"{value!r} is not a valid label value"
    return None


def mig_change(node: str, config: str) -> Change:
    """Set the config and clear the state, so the next state is the answer to this change."""
    labels: dict[str, str | None] = {L.MIG_CONFIG: config, L.MIG_CONFIG_STATE: None}
    return U.node_labels_change(node, labels, f"label {L.MIG_CONFIG}={config}")


def _node_problem(snapshot: ClusterSnapshot, node: NodeView, config: str) -> str | None:
    """Why ``config`` cannot be applied to ``node``, or None."""
    view = snapshot.mig.nodes.get(node.name)
    if view is None or not node.mig_capable:
        return f"{node.name} is not MIG-capable"
    if view.available_configs and config not in view.available_configs:
        return (f"{node.name}'s MIG manager does not offer {config} (its ConfigMap "
                f"{view.config_source} offers {', '.join(view.available_configs[:8])})")
    if node.mig_config == config and node.mig_state == L.MIG_STATE_SUCCESS:
        return f"{node.name} already runs {config}"
    if node.mig_config == config:
        # mig-manager's informer acts only when the label's value changes (main.go,
        # UpdateFunc), or when its pod starts and reads it (AddFunc)
        return (f"{node.name} already asks for {config} ({node.mig_state or 'no state'}): the "
                "MIG manager acts only when the label changes; to retry, delete the node's "
                "nvidia-mig-manager pod (it applies the label when it starts) or choose "
                "another config")
    return None


def _story(snapshot: ClusterSnapshot, node: NodeView, config: str) -> str:
    view = snapshot.mig.nodes.get(node.name)
    strategy = (view.strategy if view else None) or snapshot.cluster_policy.mig_strategy or "?"
    now = node.mig_config or "none"
    return (f"{node.name}: {now} ({node.mig_state or 'no state'}) -> {config}; while it "
            "applies, the device plugin, GFD and dcgm-exporter are paused "
            f"({L.PAUSED_FOR_MIG_CHANGE}) and the node advertises no GPUs; MIG strategy "
            f"{strategy} decides the resource names afterwards")


def _safe_impact(snapshot: ClusterSnapshot, nodes: Sequence[NodeView],
                 config: str) -> tuple[str, ...]:
    """The cordon's effect on the fleet, then what changes on each node."""
    line = unavailable_line(snapshot, [n.name for n in nodes])
    return (*((line,) if line else ()), *(_story(snapshot, n, config) for n in nodes))


class _MigAction(ActionDefaults):
    """The shared parameter and per-node checks."""

    scope: Scope = Scope.NODES
    risk: Risk = Risk.DESTRUCTIVE
    permissions: tuple[Permission, ...] = (PATCH_NODES,)
    params: tuple[ParamSpec, ...] = (
        ParamSpec("config", "MIG config (offered by the node's MIG manager)", choices=offered,
                  validate=check_config),)

    def _targets(self, snapshot: ClusterSnapshot, targets: Sequence[str],
                 config: str) -> tuple[list[NodeView], list[str]]:
        nodes, problems = [], []
        for name in targets:
            node = snapshot.nodes.get(name)
            problem = (f"{name} is not in the snapshot" if node is None
                       else _node_problem(snapshot, node, config))
            if problem or node is None:
                problems.append(problem or name)
            else:
                nodes.append(node)
        return nodes, problems


class SetMigConfig(_MigAction):
    id: str = "mig-config"
    title: str = "mig: set config (label only)"
    tooltip: str = ("Set nvidia.com/mig.config now; GPU pods on the node lose their GPUs "
                    "(use 'mig: safe change' to cordon and wait first).")
    aliases: tuple[str, ...] = ("mig-label",)

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        config = str(params.get("config", "")).strip()
        nodes, problems = self._targets(snapshot, targets, config)
        error = check_config(config)
        warnings = [f"GPU pods on {n.name} will be terminated: {', '.join(gpu_pod_lines(n))}"
                    for n in nodes if n.gpu_pods]
        warnings += problems
        warnings += risk_warnings(snapshot, [n.name for n in nodes])
        if any(n.gpu_pods for n in nodes):
            warnings.append("'mig: safe change' cordons and waits for these pods first")
        return Plan(self.id, f"Set MIG config {config} on {len(nodes)} node(s)",
                    targets=tuple(n.name for n in nodes),
                    changes=tuple(mig_change(n.name, config) for n in nodes),
                    impact=tuple(_story(snapshot, n, config) for n in nodes),
                    warnings=tuple(warnings), risk=Risk.DESTRUCTIVE,
                    blocked=error or (None if nodes else "; ".join(problems) or "no node"),
                    params=dict(params), basis=snapshot)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        done, stopped = U.send_all(plan, writer, progress, cancel)
        if stopped is not None:
            return stopped
        return Result(ok=True, summary=f"{plan.title}: label set; the MIG manager applies it",
                      details=tuple(done))


class SafeMigChange(_MigAction):
    """The safe path: cordon, wait for (or drain) GPU pods, set, wait for success, uncordon."""

    id: str = "mig-config-safe"
    title: str = "mig: safe change"
    tooltip: str = ("Change the MIG layout without killing jobs: cordon, wait for GPU pods to "
                    "finish (or drain), set the config, wait for success, uncordon.")
    aliases: tuple[str, ...] = ("mig-safe",)
    permissions: tuple[Permission, ...] = (
        PATCH_NODES, Permission("get", "nodes"), Permission("list", "pods"),
        Permission("create", "pods", "", "eviction"), Permission("get", "pods", "", "log"))
    params: tuple[ParamSpec, ...] = (
        _MigAction.params[0],
        ParamSpec("gpu_pods", "GPU pods on the node: wait for them to finish, or drain",
                  choices=lambda snap, targets: GPU_POD_MODES,
                  validate=lambda text: None if text.strip() in GPU_POD_MODES
                  else "choose wait or a drain",
                  default=lambda snap, targets: "wait"))
    #: seconds between polls while waiting (tests shorten it)
    poll_seconds: float = 5.0
    #: give up waiting for the MIG manager after this long (mig-parted waits 5 min per
    #: GPU client alone; a wedged manager stays ``pending`` forever, gpu-operator #2833)
    apply_timeout: float = 1200.0

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        config = str(params.get("config", "")).strip()
        mode = str(params.get("gpu_pods", "wait")).strip() or "wait"
        nodes, problems = self._targets(snapshot, targets, config)
        changes = [c for node in nodes for c in _node_changes(node, config, [])]
        return Plan(self.id, f"Safely change MIG config to {config} on {len(nodes)} node(s)",
                    targets=tuple(n.name for n in nodes), changes=tuple(changes),
                    steps=mig_steps.describe(nodes, config, mode),
                    impact=_safe_impact(snapshot, nodes, config),
                    warnings=(*problems, *risk_warnings(snapshot, [n.name for n in nodes])),
                    risk=Risk.DESTRUCTIVE,
                    blocked=check_config(config) or (
                        None if mode in GPU_POD_MODES else "choose wait or a drain") or (
                        None if nodes else "; ".join(problems) or "no node"),
                    params={"config": config, "gpu_pods": mode}, basis=snapshot)

    def server_plan(self, plan: Plan, writer: ClusterWriter) -> Plan:
        """With a drain: each node's pods from the server, and one eviction per pod the
        drain will evict, between the node's cordon and its MIG label. A node whose pods
        the options refuse ends the plan at its cordon (the run stops there)."""
        label = drain_mode_options(str(plan.params.get("gpu_pods", "")))
        if label is None or plan.basis is None:
            return plan
        options = drain_options({"options": label})
        sortings = list_sorted(writer, plan.targets, options)
        if isinstance(sortings, str):
            return replace(plan, blocked=sortings)
        changes: list[Change] = []
        for name in plan.targets:
            node, sorting = plan.basis.nodes[name], sortings[name]
            if sorting.refused:
                changes += _node_changes(node, str(plan.params["config"]), [])[:1]
                break
            kubectl = drain_kubectl(name, options, DEFAULT_TIMEOUT)
            changes += _node_changes(node, str(plan.params["config"]),
                                     evictions(sorting, kubectl))
        return describe(replace(plan, changes=tuple(changes)), sortings)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        """Run the safe path node by node; stop at the first node that does not succeed."""
        snapshot = plan.basis
        details: list[str] = []
        for index, name in enumerate(plan.targets):
            node = snapshot.nodes.get(name) if snapshot is not None else None
            run = mig_steps.SafePath(writer, progress, cancel, name, str(plan.params["config"]),
                                     str(plan.params["gpu_pods"]), self.poll_seconds,
                                     self.apply_timeout,
                                     was_cordoned=bool(node is not None and node.cordoned),
                                     plan=plan)
            result = run.run(index, len(plan.targets))
            details.extend(result.details)
            if not result.ok:
                return Result(ok=False, summary=result.summary, error=result.error,
                              details=tuple(details), cancelled=result.cancelled,
                              interrupted=result.interrupted)
        return Result(ok=True, summary=f"{plan.title}: done", details=tuple(details))


def _node_changes(node: NodeView, config: str, drain: Sequence[Change]) -> list[Change]:
    """One node's writes in the order the safe path sends them: cordon (unless it was),
    the drain's evictions, the MIG label, uncordon (unless it was cordoned before)."""
    cordon = [] if node.cordoned else [cordon_change(node.name)]
    uncordon = [] if node.cordoned else [cordon_change(node.name, False)]
    return [*cordon, *drain, mig_change(node.name, config), *uncordon]


ACTIONS: tuple[Action, ...] = (SafeMigChange(), SetMigConfig())
