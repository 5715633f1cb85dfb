"""Metrics frames of a recording: each reading with only the trace points not yet recorded.

The metrics pane asks for a 120-sample window of the selected node every 2 s; recorded whole,
an hour of it would repeat each sample 120 times. So the writer keeps, per trace (node, GPU,
MIG instance, quantity), the time of the last point it wrote, and a frame carries each
trace as ``[window start, [new points]]``. The reader keeps every trace's points once, in
time order, and gives a reading back its window by bisecting them.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gputui.domain.metrics import (
    FleetMetrics,
    GpuMetrics,
    MetricsOrigin,
    MetricsReading,
    NodeMetrics,
    Trace,
)
from gputui.sources.tape.format import METRICS

#: the traced quantities of a GPU, as GpuMetrics names them
TRACES = ("util", "fb_used", "temp", "power", "sm_clock")
TraceKey = tuple[str, int, str, str]


def _num(value: float) -> float | None:
    """JSON has no NaN nor infinity: a missing sample is null."""
    return value if math.isfinite(value) else None


def _back(value: Any) -> float:
    return math.nan if value is None else float(value)


class MetricsEncoder:
    """The writer's side: remembers the last point written per trace."""

    def __init__(self) -> None:
        self._last: dict[TraceKey, float] = {}

    def frame(self, reading: MetricsReading, at: float) -> dict[str, Any]:
        """A metrics frame at ``at`` for ``reading``."""
        o, fleet = reading.origin, reading.fleet
        frame: dict[str, Any] = {
            "t": at, "k": METRICS,
            "origin": [o.kind, o.where, o.updated_at, o.fallback, o.since, o.error],
            "fleet": None if fleet is None else [
                fleet.scope, fleet.gpus, fleet.busy, _num(fleet.avg_util),
                None if fleet.hottest is None else list(fleet.hottest),
                fleet.xids_last_hour, fleet.mig_devices],
            "util": {n: _num(v) for n, v in reading.node_util.items()},
            "node": None}
        if reading.node is not None:
            frame["node"] = {"node": reading.node.node,
                             "gpus": [self._gpu(reading.node.node, g) for g in reading.node.gpus]}
        return frame

    def _gpu(self, node: str, gpu: GpuMetrics) -> dict[str, Any]:
        traces: dict[str, Any] = {}
        for name in TRACES:
            trace: Trace = getattr(gpu, name)
            if not trace:
                continue
            key = (node, gpu.gpu, gpu.instance, name)
            last = self._last.get(key, -math.inf)
            new = [[t, _num(v)] for t, v in trace if t > last]
            self._last[key] = max(last, trace[-1][0])
            traces[name] = [trace[0][0], trace[-1][0], new]
        return {"gpu": gpu.gpu, "instance": gpu.instance, "profile": gpu.profile,
                "model": gpu.model, "fb_total": gpu.fb_total, "power_limit": gpu.power_limit,
                "pods": list(gpu.pods), "xid": gpu.xid, "traces": traces}


@dataclass(frozen=True, slots=True)
class _GpuFrame:
    fixed: Mapping[str, Any]
    windows: Mapping[str, tuple[float, float]]


@dataclass(frozen=True, slots=True)
class MetricsFrame:
    """One recorded reading, its traces as windows over the reader's point history."""

    at: float
    origin: MetricsOrigin
    fleet: FleetMetrics | None
    util: Mapping[str, float]
    node: str | None
    gpus: tuple[_GpuFrame, ...]


class MetricsHistory:
    """The reader's side: every trace's points once, and the frames that window them."""

    def __init__(self) -> None:
        self.frames: list[MetricsFrame] = []
        self._times: dict[TraceKey, list[float]] = {}
        self._values: dict[TraceKey, list[float]] = {}

    def add(self, frame: Mapping[str, Any]) -> None:
        """Read one metrics frame (already sanitised); a bad shape raises ValueError,
        TypeError or KeyError (the reader says the file is damaged)."""
        origin = MetricsOrigin(*(_origin(frame["origin"])))
        fleet_row = frame.get("fleet")
        fleet = None
        if fleet_row is not None:
            scope, gpus, busy, avg, hottest, xids, mig = fleet_row
            fleet = FleetMetrics(str(scope), int(gpus), int(busy), _back(avg),
                                 None if hottest is None else
                                 (str(hottest[0]), int(hottest[1]), float(hottest[2])),
                                 int(xids), int(mig))
        util = {str(n): _back(v) for n, v in dict(frame.get("util") or {}).items()}
        node_row = frame.get("node")
        node = None if node_row is None else str(node_row["node"])
        gpus = tuple(self._gpu(node or "", g) for g in (node_row or {}).get("gpus") or ())
        self.frames.append(MetricsFrame(float(frame["t"]), origin, fleet, util, node, gpus))

    def _gpu(self, node: str, row: Mapping[str, Any]) -> _GpuFrame:
        fixed: dict[str, Any] = {"gpu": int(row["gpu"]), "instance": str(row.get("instance") or ""),
                 "profile": str(row.get("profile") or ""), "model": str(row.get("model") or ""),
                 "fb_total": float(row.get("fb_total") or 0.0),
                 "power_limit": float(row.get("power_limit") or 0.0),
                 "pods": tuple(str(p) for p in row.get("pods") or ()),
                 "xid": int(row.get("xid") or 0)}
        windows: dict[str, tuple[float, float]] = {}
        for name, (start, end, points) in dict(row.get("traces") or {}).items():
            if name not in TRACES:
                raise ValueError(f"unknown trace {name!r}")
            key = (node, fixed["gpu"], fixed["instance"], name)
            times = self._times.setdefault(key, [])
            values = self._values.setdefault(key, [])
            for t, v in points:
                if isinstance(t, str) or isinstance(v, str):
                    raise TypeError("a trace point that is not a number")
                if not times or float(t) > times[-1]:  # time order, each point once
                    times.append(float(t))
                    values.append(_back(v))
            windows[name] = (float(start), float(end))
        return _GpuFrame(fixed, windows)

    def reading(self, frame: MetricsFrame, node_frame: MetricsFrame | None) -> MetricsReading:
        """``frame``'s reading, its node part from ``node_frame`` (None: no node)."""
        node = None
        if node_frame is not None and node_frame.node is not None:
            node = NodeMetrics(node_frame.node, tuple(
                self._metrics(node_frame.node, g) for g in node_frame.gpus))
        return MetricsReading(frame.origin, frame.fleet, node, dict(frame.util))

    def _metrics(self, node: str, gpu: _GpuFrame) -> GpuMetrics:
        traces: dict[str, Trace] = {}
        for name, (start, end) in gpu.windows.items():
            key = (node, gpu.fixed["gpu"], gpu.fixed["instance"], name)
            times, values = self._times.get(key, []), self._values.get(key, [])
            low, high = bisect_left(times, start), bisect_right(times, end)
            traces[name] = tuple(zip(times[low:high], values[low:high], strict=True))
        return GpuMetrics(**gpu.fixed, util=traces.get("util", ()),
                          fb_used=traces.get("fb_used", ()), temp=traces.get("temp", ()),
                          power=traces.get("power", ()), sm_clock=traces.get("sm_clock", ()))


def _origin(row: Sequence[Any]) -> tuple[str, str, float, str, float, str]:
    kind, where, updated, fallback, since, error = row
    return str(kind), str(where), float(updated), str(fallback), float(since), str(error)
