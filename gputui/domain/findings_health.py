"""GPU health from counters: ``gpu-memory-error``, ``pcie-replays``, ``nvlink-errors``,
``gpu-throttled``.

The counters count since boot, so a rule judges how much one *rose* (a
:class:`~gputui.domain.inputs.CounterRise`) over the span the source measured it over, and
each finding says which source and span it used: "over the last 10 min (Prometheus)" or
"since gputui started reading it 3 min ago (exporter scrapes)". The thresholds are settings
(:mod:`gputui.domain.thresholds`); the facts behind each rule are in
``../shared/domain/gpu-operator.md`` (§7, "Memory health", "Bus", "Thermals/power").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import median

from gputui.domain import catalogue as C
from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth, GpuHeat
from gputui.domain.metrics import gpu_spec
from gputui.domain.model import Finding, Severity
from gputui.domain.timefmt import duration

MEMORY_HINT = ("Uncorrectable memory errors are repaired by remapping the row, which takes "
               "effect only after a GPU reset: drain the node, then reset the GPU "
               "(nvidia-smi -r) or reboot it. Repeated remaps, or a row-remap-failure, mean "
               "the GPU should be replaced (RMA).")
MEMORY_RMA_HINT = ("Several uncorrectable memory errors, or a failed row remap: drain the "
                   "node and have the GPU replaced (RMA).")
CORRECTABLE_HINT = ("Correctable errors alone need no action: the remap applies at the next "
                    "GPU reset. Watch for uncorrectable ones.")
PCIE_HINT = ("A degrading PCIe link or riser: check the link's width and speed "
             "(nvidia-smi -q), reseat or replace the riser or cable at the next "
             "maintenance; XID 79 (fallen off the bus) often follows.")
NVLINK_HINT = ("An NVLink link is erring: check it with nvidia-smi nvlink -e; multi-GPU "
               "jobs on this node may slow down or fail. Reset the GPUs, then have the "
               "link or baseboard serviced if it keeps erring.")
THROTTLE_HINT = ("Clocks are held down, so jobs on this GPU run slower: for thermal, check "
                 "the node's cooling (fans, airflow, inlet temperature); for power, the "
                 "power limit and the PSUs; a hardware (reliability) slowdown needs the "
                 "vendor.")
#: a GPU whose SM clock is below this share of its busy siblings' is "far below" them
SLOW_CLOCK = 0.75
#: a rate needs at least this span (seconds) to be judged: two scrapes 5 s apart are noise
MIN_RATE_SPAN = 60.0


def measured(health: GpuHealth, rise: CounterRise, windows: H.HealthWindows) -> str:
    """How a rise was measured, as the finding says it."""
    span = duration(rise.seconds)
    if health.origin == "prometheus":
        return f"over the last {span} (Prometheus)"
    if rise.seconds < windows.span(rise.counter) - MIN_RATE_SPAN / 2:
        return f"since gputui started reading it {span} ago (exporter scrapes)"
    return f"over the last {span} (exporter scrapes)"


def _by_gpu(rises: Iterable[CounterRise], names: Sequence[str] | Iterable[str]
            ) -> dict[int, list[CounterRise]]:
    wanted = set(names)
    grouped: dict[int, list[CounterRise]] = defaultdict(list)
    for rise in rises:
        if rise.counter in wanted and rise.rise > 0:
            grouped[rise.gpu].append(rise)
    return {gpu: grouped[gpu] for gpu in sorted(grouped)}


def _short(counter: str) -> str:
    return counter.removeprefix("DCGM_FI_DEV_")


def _amounts(rises: Sequence[CounterRise]) -> str:
    return ", ".join(f"{_short(r.counter)} +{r.rise:g}" for r in rises)


def memory_findings(node: str, health: GpuHealth,
                    windows: H.HealthWindows) -> list[Finding]:
    """``gpu-memory-error`` per GPU: critical when an uncorrectable counter rose, info
    when only correctable rows were remapped."""
    found = []
    for gpu, rises in _by_gpu(health.rises, H.MEMORY_COUNTERS).items():
        bad = [r for r in rises if r.counter in H.MEMORY_ERRORS]
        how = measured(health, rises[0], windows)
        if bad:
            # the counters see one error from several sides (a DBE is also a remapped row):
            # at least as many errors as the counter that rose most, not their sum
            count = max(r.rise for r in bad)
            repeated = count >= 2 or gpu in health.row_remap_failed
            found.append(C.finding(
                C.GPU_MEMORY_ERROR, node,
                f"GPU {gpu}: {count:g} uncorrectable memory error"
                f"{'' if count == 1 else 's'} ({_amounts(bad)}) {how}",
                MEMORY_RMA_HINT if repeated else MEMORY_HINT, f"gpu{gpu}"))
        else:
            found.append(C.finding(
                C.GPU_MEMORY_ERROR, node,
                f"GPU {gpu}: correctable memory errors only ({_amounts(rises)}) {how}",
                CORRECTABLE_HINT, f"gpu{gpu}", severity=Severity.INFO))
    return found


def _per_minute(rises: Sequence[CounterRise]) -> float:
    span = max(r.seconds for r in rises)
    return 60.0 * sum(r.rise for r in rises) / span if span > 0 else 0.0


def pcie_findings(node: str, health: GpuHealth, windows: H.HealthWindows,
                  limit: float) -> list[Finding]:
    """``pcie-replays`` per GPU whose replay counter rose faster than ``limit`` a minute."""
    found = []
    for gpu, rises in _by_gpu(health.rises, (H.PCIE_REPLAY,)).items():
        rate = _per_minute(rises)
        if rises[0].seconds < MIN_RATE_SPAN or rate <= limit:
            continue
        found.append(C.finding(
            C.PCIE_REPLAYS, node,
            f"GPU {gpu}: PCIe replays at {rate:,.0f}/min ({rises[0].rise:,.0f} "
            f"{measured(health, rises[0], windows)}; limit {limit:g}/min)",
            PCIE_HINT, f"gpu{gpu}"))
    return found


def nvlink_findings(node: str, health: GpuHealth, windows: H.HealthWindows,
                    limit: float) -> list[Finding]:
    """``nvlink-errors`` per GPU whose NVLink error counters rose faster than ``limit``."""
    found = []
    for gpu, rises in _by_gpu(health.rises, H.NVLINK_ERRORS).items():
        if _per_minute(rises) <= limit:
            continue
        found.append(C.finding(
            C.NVLINK_ERRORS, node,
            f"GPU {gpu}: NVLink errors rising ({_amounts(rises)}) "
            f"{measured(health, rises[0], windows)}", NVLINK_HINT, f"gpu{gpu}"))
    return found


def throttle_findings(node: str, health: GpuHealth, windows: H.HealthWindows,
                      fraction: float) -> list[Finding]:
    """``gpu-throttled`` from the violation counters where the node exports one, else
    from dcgm-exporter's clock events (:func:`clock_event_findings`), else from hot and
    slow GPUs (:func:`heat_findings`)."""
    if not health.exported & set(H.VIOLATIONS):
        if H.CLOCK_EVENTS in health.exported:
            return clock_event_findings(node, health, windows)
        return heat_findings(node, health.heat, windows)
    found = []
    for gpu, rises in _by_gpu(health.rises, H.VIOLATIONS).items():
        span = max(r.seconds for r in rises)
        throttled = min(span, sum(r.rise for r in rises) / H.NS)
        if span < windows.heat or throttled < fraction * span:
            continue
        worst = max(rises, key=lambda r: r.rise)
        found.append(C.finding(
            C.GPU_THROTTLED, node,
            f"GPU {gpu}: {H.VIOLATIONS[worst.counter]} throttling "
            f"{throttled / span:.0%} of the time, {duration(throttled)} in all "
            f"{measured(health, worst, windows)} ({_short(worst.counter)})",
            THROTTLE_HINT, f"gpu{gpu}"))
    return found


def clock_event_findings(node: str, health: GpuHealth,
                         windows: H.HealthWindows) -> list[Finding]:
    """``gpu-throttled`` from ``DCGM_EXP_CLOCK_EVENTS_COUNT``: a throttling clock event in
    every reading for at least the throttle span, one finding per GPU (its longest cause)."""
    longest: dict[int, tuple[float, str]] = {}
    for gpu, event, seconds in health.clock_events:
        if event in H.CLOCK_EVENT_CAUSES and seconds >= windows.heat:
            longest[gpu] = max(longest.get(gpu, (0.0, "")), (seconds, event))
    return [C.finding(
        C.GPU_THROTTLED, node,
        f"GPU {gpu}: {H.CLOCK_EVENT_CAUSES[event]} throttling ({event}) in every reading "
        f"for at least {duration(seconds)} ({H.CLOCK_EVENTS}; "
        f"{'Prometheus' if health.origin == 'prometheus' else 'exporter scrapes'})",
        THROTTLE_HINT, f"gpu{gpu}") for gpu, (seconds, event) in sorted(longest.items())]


def _reference_clock(gpu: GpuHeat, heat: Sequence[GpuHeat], windows: H.HealthWindows
                     ) -> tuple[float, str]:
    """(the clock a healthy GPU runs at here, what it is): the busy, cool siblings'
    median, else the model's datasheet maximum; (0, "") when neither is known."""
    cool = [h.sm_clock for h in heat if h.gpu != gpu.gpu and h.util >= H.LOADED_UTIL
            and not _hot(h, windows)]
    if cool:
        return median(cool), "its busy siblings run"
    spec = gpu_spec(gpu.model)
    return (spec.sm_clock_max_mhz, "the model's maximum is") if spec else (0.0, "")


def _hot(heat: GpuHeat, windows: H.HealthWindows) -> str:
    """What is at its slowdown temperature ("" for nothing)."""
    if heat.temp_min >= windows.temp_c:
        return f"GPU at {heat.temp_min:.0f} °C or more (slowdown {windows.temp_c:g} °C)"
    if heat.memory_temp_min is not None and heat.memory_temp_min >= windows.memory_temp_c:
        return (f"memory at {heat.memory_temp_min:.0f} °C or more "
                f"(slowdown {windows.memory_temp_c:g} °C)")
    return ""


def heat_findings(node: str, heat: Sequence[GpuHeat],
                  windows: H.HealthWindows) -> list[Finding]:
    """``gpu-throttled`` without violation counters: a GPU under load, hot for the whole
    span, whose SM clock stayed far below what its siblings (or its model) run at."""
    found = []
    for gpu in sorted(heat, key=lambda h: h.gpu):
        hot = _hot(gpu, windows)
        if not hot or gpu.util < H.LOADED_UTIL or gpu.seconds < windows.heat:
            continue
        reference, what = _reference_clock(gpu, heat, windows)
        if not reference or gpu.sm_clock >= SLOW_CLOCK * reference:
            continue
        found.append(C.finding(
            C.GPU_THROTTLED, node,
            f"GPU {gpu.gpu}: thermal slowdown for at least {duration(gpu.seconds)}: {hot}, "
            f"SM clock {gpu.sm_clock:,.0f} MHz at most where {what} {reference:,.0f} MHz "
            "(violation counters not exported)", THROTTLE_HINT, f"gpu{gpu.gpu}"))
    return found


def counter_findings(node: str, health: GpuHealth | None,
                     thresholds: object) -> list[Finding]:
    """Every counter-based health finding of one node (none without metrics)."""
    if health is None:
        return []
    windows = H.HealthWindows.of(thresholds)
    return (memory_findings(node, health, windows)
            + pcie_findings(node, health, windows,
                            float(getattr(thresholds, "pcie_replays_per_minute", 8.0)))
            + nvlink_findings(node, health, windows,
                              float(getattr(thresholds, "nvlink_errors_per_minute", 0.0)))
            + throttle_findings(node, health, windows,
                                float(getattr(thresholds, "throttle_fraction", 0.25))))
