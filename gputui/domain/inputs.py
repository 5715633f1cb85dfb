"""The raw input of the domain: what the live cache hands the snapshot builder.

The cache (``gputui.sources.kube``) keeps Kubernetes objects as plain JSON dicts (pods
already read into :class:`~gputui.domain.pods.PodInfo`), already
reduced (``metadata.managedFields`` and ``status.images`` dropped on arrival). Before dropping
managedFields it extracts, per node, when each label last changed (``label_times``): that is
the only way to know "pending for 50 minutes" without having watched it happen.

This module only describes the shape; it reads nothing. Keep it additive: other layers build
:class:`ClusterObjects` directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gputui.domain.jsondict import JsonDict

if TYPE_CHECKING:  # only a type here: pods.py takes JsonDict from the leaf jsondict.py
    from gputui.domain.pods import PodInfo

__all__ = ["EMPTY_OBJECTS", "WHEN_UNKNOWN", "ClusterObjects", "CounterRise", "GpuHealth",
           "GpuHeat", "GpuId", "JsonDict", "XidEvent"]


#: ``XidEvent.when`` for an XID whose time is not known (findings then state no age)
WHEN_UNKNOWN = 0.0


@dataclass(frozen=True, slots=True)
class XidEvent:
    """One XID seen on a GPU, as reported by the metrics layer (dcgm-exporter or NVML).

    Attributes:
        gpu: GPU index on the node (the ``gpu`` label of the DCGM series).
        xid: the XID code (``DCGM_FI_DEV_XID_ERRORS`` value / ``err_code``).
        when: epoch seconds when it was first seen (the gauge keeps the last value, so the
            metrics layer reports changes, not presence); :data:`WHEN_UNKNOWN` (or any value
            <= 0) when nobody saw it happen: a one-shot read, or an XID already there at the
            first read, since the gauge carries no time of its own.
        message: ``err_msg`` from the exporter when present.
    """

    gpu: int
    xid: int
    when: float
    message: str = ""
    #: True when ``when`` is only a bound: the XID was already there at ``when`` (the
    #: start of the history the source holds), so it happened at some time before it
    before: bool = False
    #: when the GPU last reported it, once a later XID replaced it on the gauge (a fatal
    #: XID is usually followed at once by 45); 0 while it is still the GPU's current XID
    last_seen: float = 0.0
    #: how many the exporter counted within its window (``DCGM_EXP_XID_ERRORS_COUNT``, an
    #: opt-in counter; the most it said within the lookback); 0 when not exported
    count: int = 0
    #: seconds of that window (its ``window_size_in_ms`` label); 0 when unknown
    count_window: float = 0.0
    #: ``namespace/pod`` of the pods dcgm-exporter maps to this GPU (its ``pod`` and
    #: ``namespace`` labels, or the old ``pod_name``/``pod_namespace``), on the XID's own
    #: series or any other series of the GPU: whose job dies when it is drained
    pods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CounterRise:
    """How much one DCGM counter of one GPU rose, and over how long.

    Why a rise and not a value: the health counters (remapped rows, PCIe replays, NVLink
    errors, throttle time) count since boot, so only their growth says something happened
    now. The source measures it (Prometheus' ``increase()``, or deltas between exporter
    scrapes across counter resets); the domain judges it against the thresholds.

    Attributes:
        gpu: GPU index on the node.
        counter: the DCGM field (``DCGM_FI_DEV_PCIE_REPLAY_COUNTER``).
        rise: how much it rose (the violation counters: nanoseconds).
        seconds: the span the rise was measured over.
    """

    gpu: int
    counter: str
    rise: float
    seconds: float


@dataclass(frozen=True, slots=True)
class GpuHeat:
    """One GPU's temperatures, clock and load over the last ``seconds``: the throttle
    evidence where no violation counter is exported.

    Attributes:
        temp_min: the lowest GPU temperature over the span, °C (hot all along when high).
        memory_temp_min: the same for the memory (None: not exported).
        sm_clock: the highest SM clock over the span, MHz (slow all along when low).
        util: the average utilisation over the span, percent.
        model: ``modelName`` (its datasheet clock when no sibling is busy).
    """

    gpu: int
    temp_min: float
    memory_temp_min: float | None
    sm_clock: float
    util: float
    seconds: float
    model: str = ""


@dataclass(frozen=True, slots=True)
class GpuId:
    """A GPU as the exporter names it: index, ``UUID``, ``pci_bus_id`` and ``modelName``."""

    gpu: int
    uuid: str = ""
    pci_bus_id: str = ""
    model: str = ""


@dataclass(frozen=True, slots=True)
class GpuHealth:
    """What a node's metrics say about its GPUs beyond XIDs.

    Attributes:
        gpus_reported: distinct GPU indices the exporter (or NVML) reports on the node.
        row_remap_failed: indices of GPUs whose ``DCGM_FI_DEV_ROW_REMAP_FAILURE`` is set.
        rises: the health counters that rose (never a zero rise).
        exported: the health counters the node's exporter exports at all: the others are
            "not exported", which is not "no error".
        heat: the throttle fallback's evidence, on nodes with a hot GPU only.
        gone: GPUs seen on the node earlier (within the lookback or this session) that it
            no longer reports (``gpu-count-dropped`` names them).
        origin: ``prometheus`` or ``exporter``: how the rises were measured ("" for none).
        window: the window the rate counters were asked over, seconds (a rise's own
            ``seconds`` is shorter while gputui has scraped for less).
        clock_events: (GPU, ``clock_event``, seconds) of the throttling clock events
            dcgm-exporter reported in every reading of the last ``seconds``
            (``DCGM_EXP_CLOCK_EVENTS_COUNT``, opt-in).
        present: the GPUs one exporter scrape reported, and ``readings`` its health
            counters and gauges as (GPU, DCGM field, value): what the session's counter
            book turns into rises, heat and gone GPUs; empty once it has (never recorded).
    """

    gpus_reported: int
    row_remap_failed: tuple[int, ...] = ()
    rises: tuple[CounterRise, ...] = ()
    exported: frozenset[str] = frozenset()
    heat: tuple[GpuHeat, ...] = ()
    gone: tuple[GpuId, ...] = ()
    origin: str = ""
    window: float = 0.0
    present: tuple[GpuId, ...] = ()
    readings: tuple[tuple[int, str, float], ...] = ()
    clock_events: tuple[tuple[int, str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterObjects:
    """Everything the domain needs from the cluster, as plain dicts (pods may come read).

    Attributes:
        nodes: GPU nodes by name.
        pods: (namespace, name) -> pod: every pod in the operator namespace plus the
            GPU-requesting pods on GPU nodes. The live cache hands them already read
            (:class:`~gputui.domain.pods.PodInfo`); fixtures may hand raw dicts.
        daemonsets: DaemonSets in the operator namespace, by name.
        cluster_policies: every ClusterPolicy (normally one; extras are ``ignored``).
        nvidia_drivers: every NVIDIADriver CR.
        configmaps: (namespace, name) -> ConfigMap: MIG configs (``default-mig-parted-config``,
            ``<node>-mig-config``, custom) and the device-plugin config.
        events: Node events with reason ``GPUDriverUpgrade`` (namespace ``default``), and
            the operand DaemonSets' ``FailedCreate`` events (operator namespace).
        label_times: node -> label key -> epoch seconds when the label last changed.
        operator_namespace: the discovered operator namespace, None when unknown.
        context: kubeconfig context name shown in the header and in ``check --json``.
        server: API server URL.
        forbidden: resource names that answered 403 (so the UI can say what it cannot see).
        xids: node -> XID events, fed by the metrics layer (empty when it has none).
        loading: resource names whose first list has not arrived yet (``pods``,
            ``clusterpolicies`` ...): what they would say is unknown, not absent.
        gpu_health: node -> GPU facts from the metrics layer (nodes it read only).
        unreadable: resource -> why it could not be read (``forbidden`` for a 403,
            ``not-served`` for a 404); ``forbidden`` names count as ``forbidden`` here too.
        cluster_uid: the ``kube-system`` namespace UID, "" when it was not read.
        disruption_budgets: every PodDisruptionBudget (policy/v1, all namespaces), reduced
            to metadata, selector, limits and status; None when the input holds no budget
            list at all (a recording or fixture made before gputui read them), which is
            "not read", not "none".
    """

    nodes: Mapping[str, JsonDict] = field(default_factory=dict)
    pods: Mapping[tuple[str, str], PodInfo | JsonDict] = field(default_factory=dict)
    daemonsets: Mapping[str, JsonDict] = field(default_factory=dict)
    cluster_policies: Sequence[JsonDict] = ()
    nvidia_drivers: Sequence[JsonDict] = ()
    configmaps: Mapping[tuple[str, str], JsonDict] = field(default_factory=dict)
    events: Sequence[JsonDict] = ()
    label_times: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    operator_namespace: str | None = None
    context: str = ""
    server: str = ""
    forbidden: frozenset[str] = frozenset()
    xids: Mapping[str, Sequence[XidEvent]] = field(default_factory=dict)
    loading: frozenset[str] = frozenset()
    gpu_health: Mapping[str, GpuHealth] = field(default_factory=dict)
    unreadable: Mapping[str, str] = field(default_factory=dict)
    #: the ``kube-system`` namespace UID (with ``server``, what tells this cluster's audit
    #: lines from others': :mod:`gputui.domain.cluster_id`); "" when not read
    cluster_uid: str = ""
    #: which budget held a pod a drain could not evict (:mod:`gputui.domain.disruption`)
    disruption_budgets: Sequence[JsonDict] | None = None


#: The empty input: a builder given this produces an empty but valid snapshot.
EMPTY_OBJECTS = ClusterObjects()
