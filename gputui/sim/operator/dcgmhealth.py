"""The exporter's health series: default counters a fault moves, and the opt-in counters.

dcgm-exporter's default counters (the GPU Operator's ``dcp-metrics-included.csv``) already
carry the PCIe replay counter and the remapped rows; the violation times, ECC and
retired-page counts, NVLink error counters and the exporter's own
``DCGM_EXP_XID_ERRORS_COUNT`` / ``DCGM_EXP_CLOCK_EVENTS_COUNT`` are commented out there and
exported only when a custom metrics CSV enables them: here a scenario's ``exporterMetrics``
list, or a fault that needs them on its node (:data:`OPT_IN` names them all). Names, types
and help as upstream ``etc/default-counters.csv``, violations in ns (dcgm-exporter #589).

The ``DCGM_EXP_*`` series count DCGM samples within the exporter's window
(``internal/pkg/collector/expcollector.go``): one series per XID code or clock event seen,
labelled ``xid`` / ``clock_event`` and ``window_size_in_ms``, and a single 0 series without
them when there was none.
"""

from __future__ import annotations

import functools
from typing import Any

from gputui.sim.operator import gpufaults as F
from gputui.sim.operator.hardware import electrical

XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
CLOCK_EVENTS = "DCGM_EXP_CLOCK_EVENTS_COUNT"
VIOLATIONS = ("POWER", "THERMAL", "SYNC_BOOST", "BOARD_LIMIT", "LOW_UTIL", "RELIABILITY")
_VIOLATION_HELP = {"POWER": "power constraints", "THERMAL": "thermal constraints",
                   "SYNC_BOOST": "sync-boost constraints", "BOARD_LIMIT": "board limit constraints",
                   "LOW_UTIL": "low utilization", "RELIABILITY": "reliability constraints"}
NVLINK_ERRORS = ("CRC_FLIT", "CRC_DATA", "REPLAY", "RECOVERY")
_NVLINK_HELP = {"CRC_FLIT": "Total number of NVLink flow-control CRC errors.",
                "CRC_DATA": "Total number of NVLink data CRC errors.",
                "REPLAY": "Total number of NVLink retries.",
                "RECOVERY": "Total number of NVLink recovery errors."}
#: name, type, help of every opt-in series, in the CSV's order
OPT_IN: list[tuple[str, str, str]] = [
    *[(f"DCGM_FI_DEV_{v}_VIOLATION", "counter",
       f"Throttling duration due to {_VIOLATION_HELP[v]} (in ns).") for v in VIOLATIONS],
    ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."),
    ("DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors."),
    ("DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors."),
    ("DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement."),
    *[(f"DCGM_FI_DEV_NVLINK_{e}_ERROR_COUNT_TOTAL", "counter", _NVLINK_HELP[e])
      for e in NVLINK_ERRORS],
    (XID_COUNT, "gauge", "Count of XID Errors within user-specified time window (see "
                         "xid-count-window-size param)."),
    (CLOCK_EVENTS, "gauge", "Count of clock events within the user-specified time window (see "
                            "clock-events-count-window-size param)."),
]
OPT_IN_NAMES = frozenset(name for name, _, _ in OPT_IN)
#: the NVLink error counters a failing link needs exported (``nvlink:`` enables them)
NVLINK_COUNTERS = frozenset(f"DCGM_FI_DEV_NVLINK_{e}_ERROR_COUNT_TOTAL" for e in NVLINK_ERRORS)
#: clock event per throttle cause (DCGM ``DCGM_CLOCKS_EVENT_REASON_*`` as the exporter names them)
_CLOCK_EVENT = {"thermal": "hw_thermal", "power": "power_cap"}


def apply(values: dict[str, float], gpu: Any, model: Any, now: float, busy: bool) -> None:
    """Move the default counters a fault touches and add the opt-in values (filtered by
    the caller to what is enabled)."""
    state = gpu.wear
    if state is not None:
        values["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] = (
            state.pcie.value(now, state.boot) if state.pcie else 0)
        values["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"] = state.uncorrectable_rows
        values["DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"] = state.correctable_rows
        if state.throttle:
            _throttled(values, state, model, busy)
    values.update(_opt_in(gpu, model, now))


def _throttled(values: dict[str, float], state: F.Wear, model: Any, busy: bool) -> None:
    """Clocks held down under load; thermal runs hot, power sits at the board limit."""
    if busy:
        values["DCGM_FI_DEV_SM_CLOCK"] = F.THROTTLED_SM_MHZ
    if state.throttle == "thermal":
        values["DCGM_FI_DEV_GPU_TEMP"] = F.THERMAL_GPU_C
        values["DCGM_FI_DEV_MEMORY_TEMP"] = F.THERMAL_MEM_C
    elif busy:
        values["DCGM_FI_DEV_POWER_USAGE"] = float(model.power_limit_w)


def _opt_in(gpu: Any, model: Any, now: float) -> dict[str, float]:
    if gpu.wear is None:  # most GPUs: the same zeros, computed once per model
        return _healthy(bool(electrical(model).nvlink_links))
    state = gpu.wear
    out: dict[str, float] = {f"DCGM_FI_DEV_{v}_VIOLATION": 0 for v in VIOLATIONS}
    if state.throttle:
        throttled = max(0.0, now - max(state.throttle_since, state.boot)) * F.THROTTLED_SHARE
        out[f"DCGM_FI_DEV_{state.throttle.upper()}_VIOLATION"] = int(throttled * 1e9)
    out.update({"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": 0, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": 0,
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": state.ecc_dbe_volatile,
                "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": state.ecc_dbe_aggregate,
                "DCGM_FI_DEV_RETIRED_SBE": 0, "DCGM_FI_DEV_RETIRED_DBE": state.retired_dbe,
                "DCGM_FI_DEV_RETIRED_PENDING": 0})
    if electrical(model).nvlink_links:  # PCIe-only parts: DCGM has no NVLink value to export
        flits = state.nvlink.value(now, state.boot) if state.nvlink else 0
        out.update({"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": flits,
                    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": flits // 5,
                    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": flits // 10,
                    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": 0})
    return out


@functools.cache
def _healthy(nvlink: bool) -> dict[str, float]:
    values = {name: 0.0 for name, kind, _ in OPT_IN if kind == "counter"}
    return {k: 0 for k in values if nvlink or "NVLINK" not in k}


def exp_samples(gpu: Any, now: float, busy: bool) -> dict[str, list[tuple[dict[str, str], int]]]:
    """The ``DCGM_EXP_*`` samples of one entity: (extra labels, value) per metric."""
    window = {"window_size_in_ms": str(F.WINDOW_MS)}
    xids = F.xid_counts(gpu, now)
    found = {XID_COUNT: [({**window, "xid": str(code)}, count) for code, count in xids.items()]
             or [(window, 0)]}
    if not gpu.fallen:
        found[CLOCK_EVENTS] = [({**window, "clock_event": event}, count)
                               for event, count in _clock_events(gpu, now, busy).items()] \
            or [(window, 0)]
    return found


def _clock_events(gpu: Any, now: float, busy: bool) -> dict[str, int]:
    """Samples within the window that carried each clock-event reason."""
    state = gpu.wear
    boot = state.boot if state is not None else 0.0
    span = min(F.WINDOW_MS / 1000, max(0.0, now - boot))
    samples = int(span // F.SAMPLE_S)
    events: dict[str, int] = {}
    if not busy and samples:
        events["gpu_idle"] = samples
    if state is not None and state.throttle:
        throttled = min(span, max(0.0, now - state.throttle_since))
        count = int(throttled // F.SAMPLE_S * F.THROTTLED_SHARE)
        if count:
            events[_CLOCK_EVENT[state.throttle]] = count
    return events
