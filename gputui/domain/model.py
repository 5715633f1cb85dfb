"""The frozen model every other layer reads: nodes, pipelines, upgrades, MIG, findings.

Everything here is immutable and built only by :mod:`gputui.domain.snapshot`. Times are epoch
seconds (``since`` fields) so the UI computes ages against its own clock and a reused view
never goes stale. The shapes are a contract with the UI and the CLI: change them additively.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gputui.domain.inputs import GpuHealth, XidEvent
from gputui.domain.join_model import JoiningNode, JoinStraggler, NodeJoin, PoolJoins
from gputui.domain.pane import Pane
from gputui.domain.readgaps import ReadGap, read_gaps
from gputui.domain.upgrade_policy import UpgradePolicy
from gputui.domain.views import (
    ClusterPolicyView,
    Condition,
    DaemonSetSummary,
    MigGpu,
    MigInstance,
    MigView,
    NodeMigView,
    NodeUpgradeStatus,
    SnapshotCounts,
    UpgradeEvent,
    UpgradeView,
)

__all__ = [
    "EMPTY_SNAPSHOT",
    "ClusterPolicyView",
    "ClusterSnapshot",
    "ComingUp",
    "Condition",
    "DaemonSetSummary",
    "DeployLabel",
    "DriverOwnership",
    "Finding",
    "GpuPod",
    "GpuResources",
    "JoinStraggler",
    "JoiningNode",
    "MigGpu",
    "MigInstance",
    "MigView",
    "NodeJoin",
    "NodeMigView",
    "NodePipeline",
    "NodeUpgradeStatus",
    "NodeView",
    "PipelineStage",
    "PoolJoins",
    "ResourceCount",
    "Severity",
    "SnapshotCounts",
    "StageStatus",
    "SubStage",
    "UpgradeEvent",
    "UpgradePolicy",
    "UpgradeView",
]


class Severity(enum.Enum):
    """How bad a finding is; ordered so that ``CRITICAL > WARNING > INFO``.

    critical: GPUs are being taken away now; warning: degraded or stuck; info: FYI.
    """

    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """3 for critical, 2 for warning, 1 for info (higher is worse)."""
        return _RANK[self.value]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank >= other.rank


_RANK = {"critical": 3, "warning": 2, "info": 1}


class StageStatus(str, enum.Enum):
    """Status of one operand on one node; the values are the ``check --json`` contract."""

    READY = "ready"
    PROGRESSING = "progressing"
    FAILED = "failed"
    PAUSED = "paused"
    DISABLED = "disabled"
    ABSENT = "absent"
    #: its pod (or whether the node should run it) could not be read: 403, not "absent"
    UNKNOWN = "unknown"


class DriverOwnership(str, enum.Enum):
    """Who provides the kernel driver on a node."""

    OPERATOR = "operator"   # gpu.deploy.driver=true: the driver DaemonSet runs here
    HOST = "host"           # gpu.deploy.driver=false: preinstalled driver (or image-shipped)
    NONE = "none"           # no deploy label at all (not a GPU node to the operator yet)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the operator should know, with where to look next.

    Attributes:
        code: a contract code such as ``driver-pod-failing`` (ARCHITECTURE.md).
        severity: how bad.
        node: the node it concerns, None for cluster-wide findings.
        message: what is wrong, in the operator's terms.
        hint: what to look at or do next.
        pane: where the UI jumps (the catalogue gives each code its pane).
        subject: what inside the node it is about (operand, DaemonSet, GPU index), or "".
        nodes: the nodes a cluster-wide finding concerns (a stalled upgrade queue's waiting
            nodes), so it is said once yet each of them can point to it; () otherwise.
    """

    code: str
    severity: Severity
    node: str | None
    message: str
    hint: str
    pane: Pane = Pane.NODES
    subject: str = ""
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SubStage:
    """One init container of an operand pod (the validator's chain, the driver manager)."""

    name: str
    status: StageStatus
    detail: str = ""
    restarts: int = 0


@dataclass(frozen=True, slots=True)
class PipelineStage:
    """One operand on one node.

    Attributes:
        operand: contract name (``driver``, ``container-toolkit``, ``operator-validator``...).
        status: see :class:`StageStatus`.
        detail: e.g. "Init:CrashLoopBackOff in k8s-driver-manager, 14 restarts".
        pod: the operand pod's name, None when there is none.
        namespace: the pod's namespace.
        restarts: total restarts of the pod's containers (init included).
        container: the container the detail is about (to open its log), or None.
        reason: the kubectl-style status, e.g. ``Init:CrashLoopBackOff``, ``Running``.
        since: epoch seconds when the pod started (or the label changed), None if unknown.
        substages: init container progress, one per init container, in order.
        deploy_label: value of the node's ``nvidia.com/gpu.deploy.<operand>`` label, or None.
        container_restarts: restarts of ``container`` alone, None without one: the figure
            its detail says ("... in nvidia-driver-ctr, 2 restarts"), which the pipeline
            row shows too (``restarts`` adds the init containers': 3 beside "2 restarts").
    """

    operand: str
    status: StageStatus
    detail: str = ""
    pod: str | None = None
    namespace: str | None = None
    restarts: int = 0
    container: str | None = None
    reason: str = ""
    since: float | None = None
    substages: tuple[SubStage, ...] = ()
    deploy_label: str | None = None
    container_restarts: int | None = None

    @property
    def shown_restarts(self) -> int:
        """The restarts a screen shows for this stage: its container's when the detail
        names one (so the row and the detail and the finding say one figure), else the
        pod's."""
        return self.restarts if self.container_restarts is None else self.container_restarts


#: init container -> the operand whose readiness it waits for (gpu-operator
#: ``assets/*/0500_daemonset.yaml`` init containers and the marker files of §1.3):
#: ``driver-validation`` waits for ``.driver-ctr-ready`` (the driver's startup probe),
#: ``toolkit-validation`` for ``toolkit-ready`` (needs the toolkit), ``plugin-validation`` for
#: node capacity (the device plugin's registration).
WAITS_ON: Mapping[str, str] = MappingProxyType({
    "driver-validation": "driver", "toolkit-validation": "container-toolkit",
    "plugin-validation": "device-plugin"})


@dataclass(frozen=True, slots=True)
class NodePipeline:
    """A node's operands in the order the readiness chain runs (§1.2/§1.3)."""

    stages: tuple[PipelineStage, ...] = ()

    def first_broken(self) -> PipelineStage | None:
        """Where readiness breaks: the stage whose own failure holds the chain up.

        Starts at the first stage (in chain order) that is neither ready nor disabled and,
        while that stage only waits in an init container for another stage's marker file
        (``WAITS_ON``), follows the dependency: a validator sitting in ``plugin-validation``
        because the device plugin crash-loops blames the device plugin, not the validator.
        """
        stage = next((s for s in self.stages
                      if s.status not in (StageStatus.READY, StageStatus.DISABLED)), None)
        seen: set[str] = set()
        while stage is not None and stage.operand not in seen:
            seen.add(stage.operand)
            dependency = self.waits_on(stage)
            if dependency is None:
                return stage
            stage = dependency
        return stage

    def waits_on(self, stage: PipelineStage) -> PipelineStage | None:
        """The not-ready stage that ``stage``'s current init container waits for, if any."""
        current = next((s for s in stage.substages
                        if s.status in (StageStatus.PROGRESSING, StageStatus.FAILED)), None)
        operand = WAITS_ON.get(current.name) if current is not None else None
        dependency = self.stage(operand) if operand and operand != stage.operand else None
        if dependency is None or dependency.status in (StageStatus.READY, StageStatus.DISABLED):
            return None
        return dependency

    def stage(self, operand: str) -> PipelineStage | None:
        """The stage for ``operand``, or None when the node has none."""
        for stage in self.stages:
            if stage.operand == operand:
                return stage
        return None


@dataclass(frozen=True, slots=True)
class ResourceCount:
    """Capacity and allocatable of one extended resource (``nvidia.com/gpu``, ``mig-*``)."""

    name: str
    capacity: int
    allocatable: int


@dataclass(frozen=True, slots=True)
class GpuResources:
    """The GPU resources a node advertises (full, shared and MIG), sorted by name."""

    entries: tuple[ResourceCount, ...] = ()

    def get(self, name: str) -> ResourceCount | None:
        """The entry for ``name`` (e.g. ``nvidia.com/gpu``), or None."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        return None

    @property
    def capacity(self) -> int:
        """Sum of capacity over every GPU resource (full GPUs, shared replicas, MIG slices)."""
        return sum(entry.capacity for entry in self.entries)

    @property
    def allocatable(self) -> int:
        """Sum of allocatable over every GPU resource."""
        return sum(entry.allocatable for entry in self.entries)


@dataclass(frozen=True, slots=True)
class GpuPod:
    """A pod that requests GPUs (or MIG slices) on a node."""

    name: str
    namespace: str
    phase: str
    gpus: int
    start_time: float | None = None
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    resources: tuple[str, ...] = ()
    #: the controlling owner (``Job``/``ReplicaSet``/``StatefulSet``...), "" when unmanaged
    owner_kind: str = ""
    owner_name: str = ""
    #: ``deletionTimestamp`` is set: terminating, yet still Running or Pending by phase
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class DeployLabel:
    """One ``nvidia.com/gpu.deploy.<operand>`` label and whether it is at a paused value."""

    operand: str
    value: str
    paused: bool


@dataclass(frozen=True, slots=True)
class ComingUp:
    """A node whose GPU pipeline is not ready yet while nothing on it fails: it joins,
    reboots or restarts an operand, inside the grace its own stages allow.

    Judged from the node's pipeline and age (:mod:`gputui.domain.coming_up`), never from its
    findings, so it also explains a ClusterPolicy's ``notReady`` for a node that has no
    ``nvidia.com/gpu.count`` yet and therefore no GPU finding.

    Attributes:
        what: what the node is doing, e.g. "driver compiling", "device-plugin starting".
        until: epoch seconds until which that is normal (the earliest stage deadline).
    """

    what: str
    until: float


@dataclass(frozen=True, slots=True)
class NodeView:
    """Everything known about one GPU node.

    ``findings`` are this node's own; ``worst`` is their highest severity (None if none).
    ``*_since`` fields are epoch seconds of the last change of the matching label.
    """

    name: str
    pool: str = ""
    product: str = ""
    gpu_count: int = 0
    resources: GpuResources = GpuResources()
    driver_version: str = ""
    kernel: str = ""
    os_image: str = ""
    ready: bool = False
    cordoned: bool = False
    gpu_present: bool = False
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    deploy_labels: tuple[DeployLabel, ...] = ()
    driver_ownership: DriverOwnership = DriverOwnership.NONE
    driver_owner_cr: str | None = None
    #: the driver pod predates its DaemonSet's current template (an upgrade is due);
    #: None when unknown (no driver pod, or no generation to compare)
    driver_outdated: bool | None = None
    upgrade_state: str = ""
    upgrade_since: float | None = None
    upgrade_skip: bool = False
    upgrade_annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    mig_capable: bool = False
    mig_config: str | None = None
    mig_state: str | None = None
    mig_strategy: str | None = None
    mig_since: float | None = None
    sharing_strategy: str = "none"
    sharing_replicas: int = 1
    device_plugin_config: str | None = None
    gpu_pods: tuple[GpuPod, ...] = ()
    #: live pods matching the upgrade policy's ``waitForCompletion.podSelector``, GPU or not
    wait_pods: tuple[GpuPod, ...] = ()
    created: float | None = None
    #: (key, value, effect) of the node's taints
    taints: tuple[tuple[str, str, str], ...] = ()
    join_to_allocatable_seconds: float | None = None
    pipeline: NodePipeline = NodePipeline()
    findings: tuple[Finding, ...] = ()
    worst: Severity | None = None
    #: the operand pods (or other inputs of pipeline and findings) are still being listed:
    #: ``findings`` and ``pipeline`` are not known yet, which is not the same as empty
    loading: bool = False
    #: inputs of the pipeline and findings that could not be read (``pods``, ``daemonsets``,
    #: ``clusterpolicies``): no finding then means "unknown", not "ok"
    unknown: tuple[str, ...] = ()
    #: why this node's GPU health (XIDs, GPUs present, row remaps) is unknown: its metrics
    #: could not be read ("503 from the pod proxy on 6 of 6 exporters"); "" when read or
    #: not asked. No finding then means "unknown", not "ok"
    health_unknown: str = ""
    #: the node is coming up within its grace (joining, rebooting, an operand restarting);
    #: None when its pipeline is ready, fails, is late or cannot be told
    coming_up: ComingUp | None = None
    #: its way from joining to its first allocatable GPU (:mod:`gputui.domain.joins`);
    #: None for a node that is not a GPU node, or while its pods are being listed
    join: NodeJoin | None = None
    #: every XID each GPU reported (what ``xid-error`` findings are made of: the worst
    #: within the lookback), so the timeline can place each at its own time; () without
    #: metrics
    xids: tuple[XidEvent, ...] = ()
    #: what the node's metrics say of its GPUs' health (counters' rises, what is exported),
    #: for the metrics pane; None without metrics
    gpu_health: GpuHealth | None = None

    @property
    def paused_labels(self) -> tuple[DeployLabel, ...]:
        """Deploy labels currently at a paused value."""
        return tuple(label for label in self.deploy_labels if label.paused)


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """One consistent picture of the GPU cluster; the UI renders nothing else.

    ``nodes`` keeps a stable order (by name); ``findings`` holds every finding (node and
    cluster-wide), most severe first.
    """

    context: str = ""
    server: str = ""
    generated_at: float = 0.0
    operator_namespace: str | None = None
    cluster_policy: ClusterPolicyView = field(default_factory=ClusterPolicyView)
    nodes: Mapping[str, NodeView] = field(default_factory=lambda: MappingProxyType({}))
    upgrade: UpgradeView = field(default_factory=UpgradeView)
    mig: MigView = field(default_factory=MigView)
    findings: tuple[Finding, ...] = ()
    daemonsets: tuple[DaemonSetSummary, ...] = ()
    counts: SnapshotCounts = field(default_factory=SnapshotCounts)
    forbidden: frozenset[str] = frozenset()
    #: keys of the device plugin's ConfigMap: the values ``nvidia.com/device-plugin.config``
    #: may take (empty when sharing is not configured)
    sharing_configs: tuple[str, ...] = ()
    #: resources not listed yet (see ``ClusterObjects.loading``): the UI says "loading"
    #: for what they feed instead of a value ("policy missing", "0 nodes")
    loading: frozenset[str] = frozenset()
    #: resource -> why it could not be read (``forbidden``, ``not-served``): see
    #: :mod:`gputui.domain.readgaps` for what each hides
    unreadable: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: time to GPU per pool (:mod:`gputui.domain.join_pools`), by pool name
    joins: tuple[PoolJoins, ...] = ()
    #: the ``kube-system`` namespace UID: with ``server``, which audit lines are this
    #: cluster's (:mod:`gputui.domain.cluster_id`); "" when it was not read
    cluster_uid: str = ""

    @property
    def gaps(self) -> tuple[ReadGap, ...]:
        """What could not be read and hides something, required first."""
        return read_gaps(self.unreadable)


#: what nothing has been read of: every part of the picture
LOADING_ALL = frozenset({"nodes", "pods", "clusterpolicies", "daemonsets"})

#: Start every UI from this, never from None: nothing is known yet.
EMPTY_SNAPSHOT = ClusterSnapshot(loading=LOADING_ALL)
