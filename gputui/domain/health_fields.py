"""The DCGM fields GPU health is read from, and the windows each is measured over.

One place for the names both sources (Prometheus history, exporter scrapes) and the rules
(:mod:`gputui.domain.findings_health`) share. The names are dcgm-exporter's, as its
``etc/default-counters.csv`` and ``dcp-metrics-included.csv`` spell them: the remapped-row
counters and the PCIe replay counter are on by default; ECC, retired pages, NVLink error
and throttle-violation counters are commented out there (opt-in), so a node that does not
export one says "not exported", never "no error".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gputui.domain.metrics import SM_CLOCK, TEMP, UTIL

UNCORRECTABLE_REMAPPED_ROWS = "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"
CORRECTABLE_REMAPPED_ROWS = "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"
#: pages retired after double-bit errors: the memory-error counter before Ampere
RETIRED_DBE = "DCGM_FI_DEV_RETIRED_DBE"
ECC_DBE_VOL = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
PCIE_REPLAY = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
NVLINK_CRC_FLIT = "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"
NVLINK_CRC_DATA = "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"
NVLINK_REPLAY = "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"
NVLINK_RECOVERY = "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"
MEMORY_TEMP = "DCGM_FI_DEV_MEMORY_TEMP"

#: uncorrectable memory errors: any rise is ``gpu-memory-error``
MEMORY_ERRORS = (UNCORRECTABLE_REMAPPED_ROWS, RETIRED_DBE, ECC_DBE_VOL)
#: the memory counters, measured over the XID lookback (rare events that stay relevant
#: until the GPU is reset)
MEMORY_COUNTERS = (*MEMORY_ERRORS, CORRECTABLE_REMAPPED_ROWS)
NVLINK_ERRORS = (NVLINK_CRC_FLIT, NVLINK_CRC_DATA, NVLINK_REPLAY, NVLINK_RECOVERY)
#: throttle-violation counters (nanoseconds spent throttled) -> the cause they name.
#: ``DCGM_FI_DEV_LOW_UTIL_VIOLATION`` is left out: an idle GPU clocking down is no fault.
VIOLATIONS: Mapping[str, str] = MappingProxyType({
    "DCGM_FI_DEV_THERMAL_VIOLATION": "thermal",
    "DCGM_FI_DEV_POWER_VIOLATION": "power",
    "DCGM_FI_DEV_RELIABILITY_VIOLATION": "reliability (hardware slowdown)",
    "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION": "board limit",
    "DCGM_FI_DEV_SYNC_BOOST_VIOLATION": "sync boost",
})
#: dcgm-exporter's own gauge of clock events seen in its window (opt-in), labelled
#: ``clock_event``; the values that mean throttling -> the cause they name
#: (``internal/pkg/collector/clock_events_collector.go``). ``gpu_idle``, ``clocks_setting``
#: and ``display_clocks`` are not throttling.
CLOCK_EVENTS = "DCGM_EXP_CLOCK_EVENTS_COUNT"
CLOCK_EVENT_CAUSES: Mapping[str, str] = MappingProxyType({
    "hw_thermal": "thermal (hardware)", "sw_thermal": "thermal",
    "hw_slowdown": "hardware slowdown", "hw_power_brake": "power brake",
    "power_cap": "power cap",
})
#: the counters measured over the health window (rates)
RATE_COUNTERS = (PCIE_REPLAY, *NVLINK_ERRORS, *VIOLATIONS)
HEALTH_COUNTERS = (*MEMORY_COUNTERS, *RATE_COUNTERS)
#: the gauges of the throttle fallback
HEAT_GAUGES = (TEMP, MEMORY_TEMP, SM_CLOCK, UTIL)
#: nanoseconds in a second (the violation counters' unit)
NS = 1e9
#: a GPU at or above this utilisation (percent) is under load for the throttle fallback
LOADED_UTIL = 50.0


@dataclass(frozen=True, slots=True)
class HealthWindows:
    """How far back each health reading looks, seconds, and the fallback's temperatures.

    Attributes:
        window: the rate counters' window (``health_window_minutes``).
        lookback: the memory counters' window (``xid_lookback_minutes``).
        heat: how long a GPU must be hot and slow (``throttle_minutes``).
        temp_c: ``throttle_temp_c``; ``memory_temp_c``: ``throttle_memory_temp_c``.
    """

    window: float = 600.0
    lookback: float = 3600.0
    heat: float = 300.0
    temp_c: float = 87.0
    memory_temp_c: float = 95.0

    @classmethod
    def of(cls, thresholds: object) -> HealthWindows:
        """The windows of any thresholds object (the domain's defaults where it lacks one)."""
        base = cls()

        def minutes(name: str, default: float) -> float:
            return 60.0 * float(getattr(thresholds, name, default / 60.0))

        return cls(minutes("health_window_minutes", base.window),
                   minutes("xid_lookback_minutes", base.lookback),
                   minutes("throttle_minutes", base.heat),
                   float(getattr(thresholds, "throttle_temp_c", base.temp_c)),
                   float(getattr(thresholds, "throttle_memory_temp_c", base.memory_temp_c)))

    def span(self, counter: str) -> float:
        """The window ``counter`` is measured over."""
        return self.lookback if counter in MEMORY_COUNTERS else self.window
