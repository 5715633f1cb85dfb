"""Cluster-wide views inside a snapshot: upgrades, MIG, ClusterPolicy, DaemonSets, counts.

Split from :mod:`gputui.domain.model` (which re-exports every name here) to keep modules short;
import them from ``gputui.domain.model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gputui.domain.upgrade_policy import UpgradePolicy
from gputui.domain.upgrade_slots import slots_in_use


@dataclass(frozen=True, slots=True)
class UpgradeEvent:
    """The last ``GPUDriverUpgrade`` event of a node, with what led to it.

    Attributes:
        message: the event's message.
        time: when it was last seen (epoch seconds), None if the event carries no time.
        type: ``Normal`` or ``Warning``.
        previous_state: the state the node was in before the latest state change that the
            events record, e.g. ``pod-restart-required`` for a node now ``upgrade-failed``:
            that is the step that failed. "" when unknown.
        cause: the message of the last ``Warning`` event since that previous state was
            entered ("Failed to drain the node, ..."), "" when there was none.
    """

    message: str
    time: float | None
    type: str = "Normal"
    previous_state: str = ""
    cause: str = ""


@dataclass(frozen=True, slots=True)
class NodeUpgradeStatus:
    """Where one node stands in the driver upgrade and why it is not moving."""

    node: str
    state: str
    since: float | None = None
    skip: bool = False
    wait_reason: str = ""
    last_event: UpgradeEvent | None = None


@dataclass(frozen=True, slots=True)
class UpgradeView:
    """The driver upgrade across the cluster (§4), slots computed as the controller does.

    Attributes:
        policy: the effective upgrade policy, None when there is no driver to upgrade.
        enabled: ``autoUpgrade`` on and the controller not disabled (sandbox workloads).
        total / in_progress / failed / pending / done: node counts per §4.5.
        max_parallel: ``maxParallelUpgrades`` (0 = unlimited).
        max_unavailable: resolved against ``total`` (percent rounded up).
        unavailable: cordoned or NotReady nodes plus nodes in ``cordon-required``.
        available_slots: how many more nodes may start now.
        lanes: state -> node names, states in state-machine order, empty lanes omitted.
        nodes: per-node status incl. ``wait_reason``.
        blocked: why the controller does nothing at all this cycle, or None.
        groups: with several NVIDIADriver CRs, each CR's own figures and policy (the
            controller runs one state machine per CR over the nodes it owns); empty when
            one policy governs every node. Node statuses and lanes stay on the parent.
    """

    policy: UpgradePolicy | None = None
    enabled: bool = False
    total: int = 0
    in_progress: int = 0
    failed: int = 0
    pending: int = 0
    done: int = 0
    max_parallel: int = 0
    max_unavailable: int = 0
    unavailable: int = 0
    available_slots: int = 0
    lanes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    nodes: Mapping[str, NodeUpgradeStatus] = field(default_factory=lambda: MappingProxyType({}))
    blocked: str | None = None
    groups: Mapping[str, UpgradeView] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def slot_line(self) -> str:
        """E.g. "4 of 4 in use (1 failed)" or "2 of unlimited in use"."""
        return slots_in_use(self.in_progress, self.max_parallel, self.failed)


@dataclass(frozen=True, slots=True)
class MigInstance:
    """``count`` MIG instances of ``profile`` (e.g. ``1g.10gb`` x 7) on one GPU."""

    profile: str
    count: int


@dataclass(frozen=True, slots=True)
class MigGpu:
    """One GPU's MIG layout under the applied config."""

    index: int
    mig_enabled: bool
    instances: tuple[MigInstance, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeMigView:
    """MIG on one node (§5).

    ``applied`` is the config known to be in effect: ``desired`` when the state is
    ``success``, else None. ``gpus`` is the layout of ``applied`` (or of ``desired`` while
    pending) read from the config file; empty when the config cannot be found.
    """

    node: str
    desired: str | None
    applied: str | None
    state: str | None
    strategy: str | None
    since: float | None
    capable: bool
    config_source: str = ""
    available_configs: tuple[str, ...] = ()
    gpus: tuple[MigGpu, ...] = ()
    #: physical GPUs (:func:`gputui.domain.mig.physical_gpu_count` of the applied config);
    #: None when unknown (``gpu.count`` counts MIG devices and the config cannot say how many)
    physical_gpus: int | None = None


@dataclass(frozen=True, slots=True)
class MigView:
    """MIG across the MIG-capable nodes."""

    strategy: str | None = None
    nodes: Mapping[str, NodeMigView] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Condition:
    """A status condition (``Ready``/``Error``) of a ClusterPolicy or NVIDIADriver."""

    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class ClusterPolicyView:
    """The active ClusterPolicy; ``state`` is ``ready|notReady|ignored|missing``, or
    ``unknown`` when ClusterPolicies may not be read (403: forbidden is not missing)."""

    name: str = ""
    state: str = "missing"
    not_ready_states: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    namespace: str | None = None
    driver_enabled: bool = True
    driver_version: str = ""
    use_nvidia_driver_crd: bool = False
    upgrade_policy: UpgradePolicy | None = None
    mig_strategy: str | None = None
    mig_manager_enabled: bool = True
    mig_config_name: str | None = None
    device_plugin_config: str | None = None
    sandbox_workloads: bool = False
    disabled_operands: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    #: ``metadata.resourceVersion``: a write planned from this view sends it as a
    #: precondition, so a policy changed since the plan answers 409 instead of being overwritten
    resource_version: str = ""


@dataclass(frozen=True, slots=True)
class DaemonSetSummary:
    """One operand DaemonSet's rollout numbers; ``unscheduled`` = desired minus its pods."""

    name: str
    operand: str
    desired: int
    current: int
    ready: int
    updated: int
    available: int
    misscheduled: int
    unscheduled: int


@dataclass(frozen=True, slots=True)
class SnapshotCounts:
    """Fleet figures for the header."""

    gpu_nodes: int = 0
    nodes_ready: int = 0
    nodes_cordoned: int = 0
    gpus_total: int = 0
    gpus_allocatable: int = 0
    nodes_with_findings: int = 0
    upgrades_in_progress: int = 0
    #: of ``gpus_total``, the MIG devices (``nvidia.com/mig-*``, or ``nvidia.com/gpu`` on a
    #: ``single``-strategy MIG node): the header says so, as the fleet line does
    mig_devices: int = 0
    #: GPUs with a GPU-health finding of warning or worse (XID, missing or lost GPU, memory
    #: errors, PCIe, NVLink, throttling): the fleet line counts them
    gpus_with_health_findings: int = 0
