"""GPU metrics as the UI shows them: per-GPU traces, a fleet summary, and where they came from.

Every metrics source (Prometheus range queries, scraped exporters with history kept in
memory, local NVML) ends in the same shape: a list of :data:`Series`, each the labels of one
DCGM series plus its samples. :func:`node_metrics` turns a node's series into frozen
:class:`GpuMetrics`, one per GPU or, on a MIG GPU, one per GPU instance (labelled by its
profile, since NVML reports MIG utilisation only through the profiling counters).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: One DCGM series: its labels (``__name__`` included) and (epoch seconds, value) samples.
Series = tuple[Mapping[str, str], Sequence[tuple[float, float]]]
#: Samples of one quantity, oldest first.
Trace = tuple[tuple[float, float], ...]

UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
FB_RESERVED = "DCGM_FI_DEV_FB_RESERVED"
TEMP = "DCGM_FI_DEV_GPU_TEMP"
POWER = "DCGM_FI_DEV_POWER_USAGE"
POWER_LIMIT = "DCGM_FI_DEV_POWER_MGMT_LIMIT"
SM_CLOCK = "DCGM_FI_DEV_SM_CLOCK"
GR_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
XID = "DCGM_FI_DEV_XID_ERRORS"
ROW_REMAP_FAILURE = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
#: what the metrics pane draws for the selected node
NODE_METRICS = (UTIL, FB_USED, FB_FREE, FB_RESERVED, TEMP, POWER, POWER_LIMIT, SM_CLOCK,
                GR_ACTIVE, XID)
#: a GPU at or above this utilisation (percent) counts as busy in the fleet line
BUSY_UTIL = 5.0


def host_of(labels: Mapping[str, str]) -> str:
    """The node a series belongs to: dcgm-exporter's ``Hostname`` (``hostname`` on HEAD)."""
    return labels.get("Hostname") or labels.get("hostname") or labels.get("node") or ""


@dataclass(frozen=True, slots=True)
class GpuMetrics:
    """One GPU (or MIG GPU instance) of the selected node.

    Attributes:
        gpu: GPU index on the node.
        instance: MIG GPU instance id, "" for a whole GPU.
        profile: MIG profile (``1g.10gb``), "" for a whole GPU.
        model: ``modelName`` label.
        util: utilisation in percent (for a MIG instance: graphics engine activity).
        fb_used: framebuffer used, MiB; ``fb_total`` the GPU's (or instance's) total.
        temp: GPU temperature, °C.
        power: board power, W; ``power_limit`` its limit (0 when the source does not say).
        sm_clock: SM clock, MHz.
        pods: ``namespace/pod`` of the pods the exporter maps to this GPU.
        xid: the last XID the GPU raised (0: none).
    """

    gpu: int
    instance: str = ""
    profile: str = ""
    model: str = ""
    util: Trace = ()
    fb_used: Trace = ()
    fb_total: float = 0.0
    temp: Trace = ()
    power: Trace = ()
    power_limit: float = 0.0
    sm_clock: Trace = ()
    pods: tuple[str, ...] = ()
    xid: int = 0

    @property
    def label(self) -> str:
        """``GPU 3`` or ``GPU 3 · 1g.10gb #2``."""
        if self.profile:
            return f"GPU {self.gpu} · {self.profile} #{self.instance}"
        return f"GPU {self.gpu}"


@dataclass(frozen=True, slots=True)
class NodeMetrics:
    """The selected node's GPUs, in index order."""

    node: str
    gpus: tuple[GpuMetrics, ...] = ()


@dataclass(frozen=True, slots=True)
class FleetMetrics:
    """The header's fleet line.

    Attributes:
        scope: what the figures cover: ``fleet`` (Prometheus) or ``N nodes scraped``.
        gpus: what the header's GPU count counts, reporting activity: whole GPUs (their
            utilisation) and MIG devices (their graphics engine activity, as NVML gives no
            utilisation for MIG); ``busy`` at or above :data:`BUSY_UTIL`.
        mig_devices: of ``gpus``, the MIG devices (GPU instances).
        avg_util: average utilisation over those GPUs, percent.
        hottest: (node, GPU index, °C) of the hottest GPU, or None.
        xids_last_hour: GPUs whose XID appeared within the last hour.
    """

    scope: str = "fleet"
    gpus: int = 0
    busy: int = 0
    avg_util: float = 0.0
    hottest: tuple[str, int, float] | None = None
    xids_last_hour: int = 0
    mig_devices: int = 0

    @property
    def idle(self) -> int:
        """GPUs below :data:`BUSY_UTIL`."""
        return self.gpus - self.busy


@dataclass(frozen=True, slots=True)
class MetricsOrigin:
    """Which source answered, when, and what it fell back from.

    Attributes:
        kind: ``prometheus``, ``exporter``, ``nvml`` or ``none``.
        where: the URL, "API server pod proxy", or "local NVML".
        updated_at: epoch seconds of the last good read; 0 before the first.
        fallback: why a preferred source is not used ("Prometheus unreachable"), with
            ``since`` the epoch seconds it has been so (0 when unknown).
        error: why the last read failed (the shown data is older), or "".
    """

    kind: str = "none"
    where: str = ""
    updated_at: float = 0.0
    fallback: str = ""
    since: float = 0.0
    error: str = ""


@dataclass(frozen=True, slots=True)
class MetricsReading:
    """One refresh: what the UI shows from metrics. Widgets start from :data:`EMPTY_METRICS`."""

    origin: MetricsOrigin = field(default_factory=MetricsOrigin)
    fleet: FleetMetrics | None = None
    node: NodeMetrics | None = None
    #: average utilisation (percent) of the nodes on screen that reported one
    node_util: Mapping[str, float] = field(default_factory=dict)
    #: nodes on screen whose metrics could not be read (a failed or deferred scrape): their
    #: GPU columns show ``?``, never a blank or the last value as if current
    unread: tuple[str, ...] = ()


EMPTY_METRICS = MetricsReading()


@dataclass(frozen=True)
class MetricsWant:
    """What is on screen: the selected node, the visible rows, and their exporter pods."""

    selected: str | None = None
    visible: tuple[str, ...] = ()
    #: node -> (namespace, pod) of its running dcgm-exporter (for the exporter scrape)
    exporters: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def nodes(self) -> tuple[str, ...]:
        """Visible rows plus the selected node, without repeats."""
        extra = (self.selected,) if self.selected and self.selected not in self.visible else ()
        return self.visible + extra


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """A model's own limits, for fixed scales when the source does not report them."""

    power_limit_w: float
    sm_clock_max_mhz: float


#: datasheet figures by a fragment of dcgm-exporter's ``modelName`` (first match wins)
GPU_SPECS: tuple[tuple[str, GpuSpec], ...] = (
    ("H100", GpuSpec(700.0, 1980.0)), ("H200", GpuSpec(700.0, 1980.0)),
    ("A100", GpuSpec(400.0, 1410.0)), ("A30", GpuSpec(165.0, 1440.0)),
    ("L40S", GpuSpec(350.0, 2520.0)), ("L4", GpuSpec(72.0, 2040.0)),
    ("T4", GpuSpec(70.0, 1590.0)),
)


def gpu_spec(model: str) -> GpuSpec | None:
    """The datasheet limits of ``model`` (``NVIDIA H100 80GB HBM3``), None when unlisted."""
    for fragment, spec in GPU_SPECS:
        if fragment in model:
            return spec
    return None


def last_value(trace: Trace) -> float | None:
    """The newest sample's value, None for an empty trace."""
    return trace[-1][1] if trace else None


def _trace(points: Sequence[tuple[float, float]]) -> Trace:
    return tuple((float(t), float(v)) for t, v in points)


def _merge(old: Trace, new: Trace) -> Trace:
    """Two traces of one quantity (a pod change starts a new series): one, by time."""
    if not old:
        return new
    return tuple(sorted({t: v for t, v in old + new}.items()))


def _last(trace: Trace) -> float:
    return trace[-1][1] if trace else 0.0


def _gpu_key(labels: Mapping[str, str]) -> tuple[int, str]:
    try:
        gpu = int(labels.get("gpu", "0"))
    except ValueError:
        gpu = 0
    return gpu, labels.get("GPU_I_ID", "")


def _accumulate(series: Sequence[Series]) -> dict[tuple[int, str], dict[str, object]]:
    by_gpu: dict[tuple[int, str], dict[str, object]] = {}
    for labels, points in series:
        name = labels.get("__name__", "")
        entry = by_gpu.setdefault(_gpu_key(labels), {"profile": labels.get("GPU_I_PROFILE", ""),
                                                      "model": labels.get("modelName", ""),
                                                      "pods": set()})
        trace = _trace(points)
        old = entry.get(name, ())
        entry[name] = _merge(old if isinstance(old, tuple) else (), trace)
        pod = labels.get("pod")
        if pod and trace:
            pods = entry["pods"]
            assert isinstance(pods, set)
            pods.add(f"{labels.get('namespace', '')}/{pod}")
    return by_gpu


def _gpu(key: tuple[int, str], entry: Mapping[str, object]) -> GpuMetrics:
    def trace(name: str) -> Trace:
        value = entry.get(name, ())
        return value if isinstance(value, tuple) else ()

    util = trace(UTIL) or tuple((t, v * 100.0) for t, v in trace(GR_ACTIVE))
    total = _last(trace(FB_USED)) + _last(trace(FB_FREE)) + _last(trace(FB_RESERVED))
    pods = entry.get("pods", set())
    return GpuMetrics(
        gpu=key[0], instance=key[1], profile=str(entry.get("profile", "")),
        model=str(entry.get("model", "")), util=util, fb_used=trace(FB_USED), fb_total=total,
        temp=trace(TEMP), power=trace(POWER), power_limit=_last(trace(POWER_LIMIT)),
        sm_clock=trace(SM_CLOCK), pods=tuple(sorted(pods)) if isinstance(pods, set) else (),
        xid=int(_last(trace(XID))))


def node_metrics(node: str, series: Sequence[Series]) -> NodeMetrics:
    """The node's GPUs from its series (any order; pod changes split series, merged here).

    A GPU that reports only its XID series (fallen off the bus) is kept: its XID is what
    explains the empty graphs.
    """
    by_gpu = _accumulate(series)
    return NodeMetrics(node, tuple(_gpu(key, by_gpu[key]) for key in sorted(by_gpu)))


def fleet_from_nodes(scope: str, nodes: Mapping[str, NodeMetrics], now: float,
                     xids_last_hour: int = 0) -> FleetMetrics:
    """A fleet line computed from the nodes a source holds (exporter and NVML sources):
    whole GPUs and MIG devices, as the header counts them."""
    utils: list[float] = []
    mig = 0
    hottest: tuple[str, int, float] | None = None
    for name, metrics in nodes.items():
        for gpu in metrics.gpus:
            if gpu.util:
                utils.append(_last(gpu.util))
                mig += bool(gpu.instance)
            if gpu.temp and (hottest is None or _last(gpu.temp) > hottest[2]):
                hottest = (name, gpu.gpu, _last(gpu.temp))
    busy = sum(1 for u in utils if u >= BUSY_UTIL)
    avg = sum(utils) / len(utils) if utils else 0.0
    return FleetMetrics(scope, len(utils), busy, avg, hottest, xids_last_hour, mig)


def average_util(metrics: NodeMetrics) -> float | None:
    """The node's mean current utilisation over its whole GPUs (None when none report)."""
    values = [_last(g.util) for g in metrics.gpus if g.util and not g.instance]
    if not values:
        values = [_last(g.util) for g in metrics.gpus if g.util]
    return sum(values) / len(values) if values else None
