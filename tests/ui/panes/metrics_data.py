"""Fixed metrics readings for the metrics pane and the utilisation column (no clock, no IO)."""

from __future__ import annotations

import math

from gputui.domain.metrics import (
    FleetMetrics,
    GpuMetrics,
    MetricsOrigin,
    MetricsReading,
    NodeMetrics,
    Trace,
)
from tests.ui.panes.data import BROKEN, HEALTHY, NOW

STEP = 2.0
SAMPLES = 120


def trace(values: list[float]) -> Trace:
    start = NOW - STEP * (len(values) - 1)
    return tuple((start + i * STEP, v) for i, v in enumerate(values))


def wave(base: float, swing: float, phase: float = 0.0) -> list[float]:
    return [round(base + swing * math.sin(i / 9.0 + phase), 1) for i in range(SAMPLES)]


def busy_gpu(index: int) -> GpuMetrics:
    return GpuMetrics(
        gpu=index, model="NVIDIA H100 80GB HBM3", util=trace([98.0] * SAMPLES),
        fb_used=trace(wave(61000, 4000, index)), fb_total=81559.0,
        temp=trace(wave(70, 3, index)), power=trace(wave(612, 30, index)),
        sm_clock=trace([1980.0] * SAMPLES), pods=("ml-training/trainer-llama-0",))


def idle_gpu(index: int) -> GpuMetrics:
    return GpuMetrics(gpu=index, model="NVIDIA H100 80GB HBM3", util=trace([0.0] * 40),
                      fb_used=trace([0.0] * 40), fb_total=81559.0, temp=trace([31.0] * 40),
                      power=trace([71.0] * 40), sm_clock=trace([345.0] * 40))


def mig_instance(gi: str, profile: str) -> GpuMetrics:
    return GpuMetrics(gpu=2, instance=gi, profile=profile, model="NVIDIA H100 80GB HBM3",
                      util=trace(wave(80, 10)), fb_used=trace([7000.0] * SAMPLES),
                      fb_total=9984.0, temp=trace([58.0] * SAMPLES),
                      power=trace([400.0] * SAMPLES), sm_clock=trace([1980.0] * SAMPLES),
                      pods=("ml-inference/llm-serve-0",))


def fallen_gpu(index: int) -> GpuMetrics:
    return GpuMetrics(gpu=index, model="NVIDIA H100 80GB HBM3", xid=79)


def node_reading(node: str = BROKEN, kind: str = "prometheus") -> MetricsReading:
    gpus = (busy_gpu(0), idle_gpu(1), mig_instance("1", "3g.40gb"), fallen_gpu(3))
    origin = {
        "prometheus": MetricsOrigin("prometheus", "http://prometheus.monitoring:9090", NOW - 2),
        "exporter": MetricsOrigin("exporter", "API server pod proxy", NOW - 1,
                                  "Prometheus unreachable (connection refused)", NOW - 300),
    }[kind]
    fleet = FleetMetrics("fleet", 31, 24, 71.4, (BROKEN, 0, 74.0), 1)
    return MetricsReading(origin, fleet, NodeMetrics(node, gpus),
                          {BROKEN: 49.0, HEALTHY: 98.0})
