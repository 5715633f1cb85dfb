"""Local NVML: the no-driver path for real (no GPU here), the reading path with pynvml patched."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from gputui.sources.errors import SourceError
from gputui.sources.metrics import MetricsFeed
from gputui.sources.nvml import NvmlMetrics


def test_without_a_driver_the_feed_says_so_plainly() -> None:
    nvml = NvmlMetrics(node="this-host")
    with pytest.raises(SourceError, match="no NVIDIA driver on this machine"):
        nvml.open()
    feed = MetricsFeed(nvml=nvml, local=True)
    reading = feed.read_once()
    assert reading.origin.kind == "nvml" and "no NVIDIA driver" in reading.origin.error
    assert reading.node is None
    feed.stop()  # nothing to shut down: must not raise


class FakeNvml:
    """Two GPUs as NVML would report them; records init/shutdown."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.util = [97, 3]

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("nvmlInit", "nvmlShutdown", "nvmlDeviceGetCount",
                     "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetName",
                     "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates",
                     "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage",
                     "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetClockInfo"):
            monkeypatch.setattr(pynvml, name, getattr(self, name))

    def nvmlInit(self) -> None:
        self.calls.append("init")

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return b"NVIDIA L4"

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> Any:
        mib = 1024 * 1024
        return SimpleNamespace(used=20000 * mib, free=3034 * mib, total=23034 * mib)

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> Any:
        return SimpleNamespace(gpu=self.util[handle], memory=10)

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return 70 + handle

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return 65000

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return 72000

    def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> int:
        return 2040


def test_reading_local_gpus_and_shutdown_on_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()
    fake.install(monkeypatch)
    clock = iter(float(t) for t in range(100, 200))
    feed = MetricsFeed(nvml=NvmlMetrics(node="gpu-node-1"), local=True, clock=lambda: next(clock))
    first = feed.read_once()
    fake.util = [99, 0]
    second = feed.read_once()
    assert second.origin.kind == "nvml" and second.origin.where == "local NVML on gpu-node-1"
    assert second.origin.updated_at == 101.0 and first.origin.error == ""
    assert second.node is not None
    gpu0, gpu1 = second.node.gpus
    assert [v for _, v in gpu0.util] == [97.0, 99.0]
    assert gpu0.fb_total == pytest.approx(23034.0) and gpu0.power_limit == 72.0
    assert gpu0.model == "NVIDIA L4" and gpu1.temp[-1][1] == 71.0
    assert second.fleet is not None and (second.fleet.busy, second.fleet.idle) == (1, 1)
    assert second.node_util == {"gpu-node-1": pytest.approx(49.5)}
    feed.stop()
    assert fake.calls == ["init", "shutdown"]


def test_on_the_selected_gpu_node_nvml_stands_in_for_a_missing_exporter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gputui.domain.metrics import MetricsWant
    from gputui.sources.scrape import ExporterMetrics

    fake = FakeNvml()
    fake.install(monkeypatch)
    feed = MetricsFeed(exporters=ExporterMetrics(None),  # type: ignore[arg-type]
                       nvml=NvmlMetrics(node="gpu-node-1"),
                       clock=lambda: 500.0)
    feed.want(MetricsWant("gpu-node-1", ("gpu-node-1",), {}))  # no exporter pod on it
    reading = feed.read_once()
    assert reading.origin.kind == "nvml" and reading.node is not None
    assert "no running dcgm-exporter pod on gpu-node-1" in reading.origin.fallback
    assert [g.gpu for g in reading.node.gpus] == [0, 1]
    feed.stop()
