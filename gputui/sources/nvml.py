"""This machine's own GPUs through NVML (``pynvml``, package ``nvidia-ml-py``).

For ``gputui --local`` on a GPU node, or as the last fallback when gputui runs on one. NVML
needs the NVIDIA driver's ``libnvidia-ml.so``; without it :meth:`NvmlMetrics.open` raises a
:class:`SourceError` that says so plainly, and the pane shows that line. NVML is shut down
by :meth:`NvmlMetrics.close` (the feed calls it on exit). Values are read as the same DCGM
field names the exporters use, so one reducer serves every source.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from gputui.domain.metrics import (
    FB_FREE,
    FB_USED,
    POWER,
    POWER_LIMIT,
    SM_CLOCK,
    TEMP,
    UTIL,
    NodeMetrics,
)
from gputui.sources.errors import SourceError
from gputui.sources.history import History

MIB = 1024 * 1024


def _nvml() -> Any:
    import pynvml

    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlMetrics:
    """Reads every local GPU once per refresh and keeps the history in memory."""

    def __init__(self, node: str | None = None, history: History | None = None) -> None:
        self.node = node or socket.gethostname()
        self.history = history or History()
        self._open = False
        self._lock = threading.Lock()

    def open(self) -> None:
        """Initialise NVML.

        Raises:
            SourceError: no NVIDIA driver (NVML library missing) or NVML failed to start.
        """
        nvml = _nvml()
        with self._lock:
            if self._open:
                return
            try:
                nvml.nvmlInit()
            except nvml.NVMLError as error:
                raise SourceError(_no_driver(error)) from None
            self._open = True

    def close(self) -> None:
        """Shut NVML down (safe to call twice or without :meth:`open`)."""
        nvml = _nvml()
        with self._lock:
            if not self._open:
                return
            self._open = False
            try:
                nvml.nvmlShutdown()
            except nvml.NVMLError:
                pass

    def read(self, now: float) -> NodeMetrics:
        """Sample every GPU now and return the node's metrics with history."""
        self.open()
        nvml = _nvml()
        try:
            samples = list(self._samples(nvml))
        except nvml.NVMLError as error:
            raise SourceError(f"NVML: {error}") from None
        self.history.add(self.node, now, samples)
        return self.history.node(self.node)

    def _samples(self, nvml: Any) -> Iterator[tuple[Mapping[str, str], float]]:
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            labels = {"gpu": str(index), "modelName": _text(nvml.nvmlDeviceGetName(handle)),
                      "Hostname": self.node}
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            values = {
                UTIL: float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu),
                FB_USED: memory.used / MIB, FB_FREE: memory.free / MIB,
                TEMP: float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)),
                POWER: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                POWER_LIMIT: nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0,
                SM_CLOCK: float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
            }
            for name, value in values.items():
                yield {"__name__": name, **labels}, value


def _no_driver(error: Exception) -> str:
    text = str(error)
    if "not found" in text.lower() or "library" in text.lower():
        return ("no NVIDIA driver on this machine: NVML (libnvidia-ml.so) could not be "
                f"loaded ({text})")
    return f"NVML could not start: {text}"


def on_gpu_node() -> bool:
    """Whether this machine looks like a GPU node (the driver's control device exists)."""
    import os

    return os.path.exists("/dev/nvidiactl")
