"""Node label actions: take a node off the GPU Operator and back, the driver, one operand,
and the device plugin's sharing config.

The GPU Operator reads ``nvidia.com/gpu.deploy.<operand>`` on each node: ``false`` removes
that operand's pod from the node (``operands`` removes them all), removing the label (or
``true``) brings it back. ``nvidia.com/device-plugin.config`` names which entry of the
device plugin's ConfigMap the node uses (time-slicing, MPS). Keys and values are checked
against Kubernetes' label syntax before anything is sent, so a typo is refused here, in
the dialog, not by the server halfway through a list of nodes.
"""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gputui.actions.base import (
    PATCH_NODES,
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
from gputui.actions.impact import gpu_pod_lines, nodes_of
from gputui.actions.patches import apply_patches
from gputui.domain.labels import DEPLOY_DRIVER, DEPLOY_OPERANDS, DEPLOY_PREFIX, DEVICE_PLUGIN_CONFIG
from gputui.domain.model import ClusterSnapshot
from gputui.domain.upgrade_state import holds_slot

#: the pick-list entry that removes the label
UNSET = "(unset)"
#: the operands a ``nvidia.com/gpu.deploy.<operand>`` label can switch (GPU Operator docs)
OPERANDS = ("driver", "gpu-feature-discovery", "container-toolkit", "device-plugin",
            "dcgm", "dcgm-exporter", "mig-manager", "node-status-exporter",
            "operator-validator", "nvsm", "sandbox-device-plugin", "sandbox-validator",
            "vfio-manager", "vgpu-manager", "vgpu-device-manager", "cc-manager",
            "kata-manager")

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_key_error(key: str) -> str | None:
    """Why ``key`` is not a valid label key (Kubernetes' qualified-name rule), or None."""
    prefix, slash, name = key.rpartition("/")
    if not key:
        return "a label key may not be empty"
    if slash and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        return f"label key {key!r}: the prefix must be a DNS subdomain"
    if not _NAME.match(name):
        return (f"label key {key!r}: the name must be 63 characters or fewer, start and end "
                "with a letter or digit, with '-', '_', '.' between")
    return None


def label_value_error(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None (the empty value is valid)."""
    if value and not _NAME.match(value):
        return (f"label value {value!r}: 63 characters or fewer, start and end with a letter "
                "or digit, with '-', '_', '.' between")
    return None


def label_change(node: str, key: str, old: str | None, new: str | None) -> Change:
    """A merge patch setting (``new``) or removing (``None``) one label, with its kubectl."""
    if new is None:
        kubectl = f"kubectl label node {node} {shlex.quote(key + '-')}"
    else:
        kubectl = f"kubectl label node {node} {shlex.quote(f'{key}={new}')} --overwrite"
    before = UNSET if old is None else old
    after = UNSET if new is None else new
    return Change("patch", "Node", node, {"metadata": {"labels": {key: new}}},
                  kubectl=kubectl, summary=f"label {key}: {before} -> {after}")


@dataclass  # not frozen: the Action protocol declares plain attributes
class LabelAction:
    """Set (or remove, value ``None``) one label on the target nodes.

    ``key_of`` and ``value_of`` read the key and value from the params the dialog asked
    for; fixed actions (operands off) ignore them.
    """

    id: str
    title: str
    tooltip: str
    keys: str
    aliases: tuple[str, ...]
    key_of: Callable[[Mapping[str, Any]], str]
    value_of: Callable[[Mapping[str, Any]], str | None]
    risk: Risk = Risk.SAFE
    params: tuple[ParamSpec, ...] = ()
    #: impact line when the label takes operands (and so GPU pods' drivers) away
    removes_gpus: bool = False
    scope: Scope = Scope.NODES
    permissions: tuple[Permission, ...] = (PATCH_NODES,)
    #: the values the cluster offers (the device plugin's ConfigMap keys); None: any
    allowed: Callable[[ClusterSnapshot], tuple[str, ...]] | None = None

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """One label patch per node whose label differs; invalid keys or values block."""
        key, value = self.key_of(params), self.value_of(params)
        error = label_key_error(key) or (label_value_error(value) if value else None)
        title = f"{self.title} on {targets[0] if len(targets) == 1 else f'{len(targets)} nodes'}"
        if not error and value is not None and self.allowed is not None and \
                value not in self.allowed(snapshot):
            offered = ", ".join(self.allowed(snapshot)) or "none"
            error = f"{value!r} is not offered by the cluster (offered: {offered})"
        if error:
            return Plan(self.id, title, tuple(targets), blocked=error, params=dict(params))
        known = nodes_of(snapshot, targets)
        todo = [(n.name, n.labels.get(key)) for n in known if n.labels.get(key) != value]
        if not todo:
            shown = "unset" if value is None else f"{key}={value}"
            return Plan(self.id, title, tuple(targets), params=dict(params),
                        blocked=f"nothing to do (already {shown} on {', '.join(targets)})")
        names = [name for name, _ in todo]
        changes = tuple(label_change(name, key, old, value) for name, old in todo)
        impact = [f"label {key} set to {value}" if value is not None
                  else f"label {key} removed"]
        if key == DEVICE_PLUGIN_CONFIG:
            impact.append("the device plugin restarts on these nodes and advertises the "
                          "config's replicas; running pods keep their GPUs")
        if self.removes_gpus:
            impact.append("the GPU Operator removes the operand pods from these nodes")
            impact += gpu_pod_lines(snapshot, names, "losing their GPU stack")
        warnings = tuple(f"{n.name} is in a driver upgrade ({n.upgrade_state})"
                         for n in nodes_of(snapshot, names)
                         if holds_slot(n.upgrade_state))
        return Plan(self.id, title, tuple(names), changes, impact=tuple(impact),
                    warnings=warnings, risk=self.risk, params=dict(params))

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        return apply_patches(plan, writer, progress, cancel, "labelled")


def _fixed(key: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda params: key


def _value(value: str | None) -> Callable[[Mapping[str, Any]], str | None]:
    return lambda params: value


def _param_value(params: Mapping[str, Any]) -> str | None:
    """``(unset)`` in a pick list means remove the label."""
    raw = str(params.get("value", ""))
    return None if raw in ("", UNSET) else raw


def _operand_key(params: Mapping[str, Any]) -> str:
    return DEPLOY_PREFIX + str(params.get("operand", ""))


def _operand_choices(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    return OPERANDS


def _deploy_values(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    return ("false", "true", UNSET)


def _sharing_choices(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    return (*snapshot.sharing_configs, UNSET)


def _sharing_default(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str:
    node = snapshot.nodes.get(targets[0]) if targets else None
    return (node.device_plugin_config if node else None) or UNSET


def _value_or_unset_error(value: str) -> str | None:
    """A label value, or ``(unset)`` (remove the label)."""
    return None if value == UNSET else label_value_error(value)


def _operand_error(value: str) -> str | None:
    return None if value in OPERANDS else f"unknown operand {value!r}"


OPERANDS_OFF = LabelAction(
    "operands_off", "Operands off", "Take the node off the GPU Operator: every operand pod "
    "goes (nvidia.com/gpu.deploy.operands=false).", "", ("operands-off", "off"),
    _fixed(DEPLOY_OPERANDS), _value("false"), Risk.DESTRUCTIVE, removes_gpus=True)
OPERANDS_ON = LabelAction(
    "operands_on", "Operands on", "Give the node back to the GPU Operator (removes "
    "nvidia.com/gpu.deploy.operands).", "", ("operands-on", "on"),
    _fixed(DEPLOY_OPERANDS), _value(None))
DRIVER_OFF = LabelAction(
    "driver_off", "Driver off", "Remove the operator's driver pod from the node "
    "(nvidia.com/gpu.deploy.driver=false), e.g. for a host-installed driver.", "",
    ("driver-off",), _fixed(DEPLOY_DRIVER), _value("false"), Risk.DESTRUCTIVE,
    removes_gpus=True)
DRIVER_ON = LabelAction(
    "driver_on", "Driver on", "Let the operator run its driver pod on the node again "
    "(nvidia.com/gpu.deploy.driver=true).", "", ("driver-on",),
    _fixed(DEPLOY_DRIVER), _value("true"))
DEPLOY_OPERAND = LabelAction(
    "deploy_label", "Operand label", "Set nvidia.com/gpu.deploy.<operand> on the node: "
    "false removes that operand, true or unset brings it back.", "", ("deploy", "operand"),
    _operand_key, _param_value, Risk.DESTRUCTIVE,
    params=(ParamSpec("operand", "Operand", choices=_operand_choices,
                      validate=_operand_error),
            ParamSpec("value", "Value", choices=_deploy_values, validate=_value_or_unset_error)),
    removes_gpus=True)
SHARING_CONFIG = LabelAction(
    "sharing_config", "Sharing config", "Choose the device plugin config (time-slicing, "
    "MPS) for the node from the device plugin's ConfigMap (nvidia.com/device-plugin.config).",
    "", ("sharing", "dp-config"), _fixed(DEVICE_PLUGIN_CONFIG), _param_value,
    params=(ParamSpec("value", "Device plugin config", choices=_sharing_choices,
                      validate=_value_or_unset_error, default=_sharing_default),),
    allowed=lambda snapshot: snapshot.sharing_configs)

ACTIONS = (OPERANDS_OFF, OPERANDS_ON, DRIVER_OFF, DRIVER_ON, DEPLOY_OPERAND, SHARING_CONFIG)
