"""The session's counter book: GPU health counters from successive exporter scrapes.

Without Prometheus there is no history but what gputui keeps. Each scrape's health counters
(:attr:`GpuHealth.readings`, from :func:`gputui.sources.scrape.health_of`) are kept per
node, GPU and counter as the points where the value *changed* (a counter that stays put for
an hour is two points, not 240), so a rise over a window is the sum of the increases since
the value in effect at the window's start. A counter that goes down was reset (the node
rebooted, the driver reloaded): its new value is what it rose since. The throttle
fallback's gauges (temperatures, SM clock, utilisation) and dcgm-exporter's clock events are
kept for the throttle span only, and start again after a scrape that lacks them.
Every GPU UUID seen on a node within the lookback is remembered, so one no longer reported
(and no other GPU in its PCI slot) is named when the node comes back short
(``gpu-count-dropped``).

What the book returns is the evidence (rises, heat, gone GPUs), never the raw readings: that
is what the snapshot judges and what a recording keeps, so a replay judges the same.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth, GpuHeat, GpuId
from gputui.domain.metrics import SM_CLOCK, TEMP, UTIL
from gputui.sources.errors import SourceError
from gputui.sources.prom_health import query_health
from gputui.sources.prometheus import PrometheusOptions

Key = tuple[str, int, str]


@dataclass
class _Trace:
    """One counter's change points (time, value), oldest first, when each value was last
    seen, and when the counter was first read."""

    first: float
    points: list[tuple[float, float]] = field(default_factory=list)
    seen: list[float] = field(default_factory=list)

    def add(self, now: float, value: float, keep: float) -> None:
        if not self.points or self.points[-1][1] != value:
            self.points.append((now, value))
            self.seen.append(now)
        else:
            self.seen[-1] = now
        # drop what is older than the window, keeping the value in effect at its start
        cut = bisect_right(self.points, (now - keep, float("inf"))) - 1
        if cut > 0:
            del self.points[:cut]
            del self.seen[:cut]

    def rise(self, now: float, span: float) -> tuple[float, float]:
        """(how much it rose over the last ``span`` seconds, the seconds that covers).

        The rise is counted from the value in effect at the window's start, which was last
        read at some scrape before it: the seconds run from that read (or the start, when
        the value was still read after it), so a steady rate is not inflated by the part of
        a scrape interval before the window (300 a minute read as 356).
        """
        start = max(self.first, now - span)
        index = max(0, bisect_right(self.points, (start, float("inf"))) - 1)
        total, last = 0.0, self.points[index][1]
        for _, value in self.points[index + 1:]:
            total += value - last if value >= last else value  # down: reset, counts anew
            last = value
        begin = max(self.first, min(start, self.seen[index]))
        return total, now - begin


class HealthBook:
    """Counter traces and UUIDs per node, over the session."""

    def __init__(self, windows: H.HealthWindows | None = None) -> None:
        self.windows = windows or H.HealthWindows()
        self._traces: dict[Key, _Trace] = {}
        #: node -> (GPU, gauge) -> its points over the throttle span
        self._gauges: dict[str, dict[tuple[int, str], list[tuple[float, float]]]] = {}
        #: node -> UUID -> (the GPU, when it was last reported)
        self._uuids: dict[str, dict[str, tuple[GpuId, float]]] = {}

    def apply(self, health: Mapping[str, GpuHealth], now: float) -> dict[str, GpuHealth]:
        """Each node's health with the evidence of every scrape so far (this one added)."""
        return {node: self.update(node, found, now) for node, found in health.items()}

    def update(self, node: str, health: GpuHealth, now: float) -> GpuHealth:
        """Add one scrape of ``node`` and return its health with rises, heat and gone GPUs."""
        self._add(node, health.readings, now)
        names = {name.partition(":")[0] for _, name, _ in health.readings}
        exported = frozenset(names & {*H.HEALTH_COUNTERS, H.CLOCK_EVENTS})
        return replace(health, rises=self._rises(node, health.readings, now),
                       exported=exported, heat=self._heat(node, health, now),
                       gone=self._gone(node, health, now), origin="exporter",
                       window=self.windows.window, present=(), readings=(),
                       clock_events=self._clock_events(node, now))

    def _add(self, node: str, readings: tuple[tuple[int, str, float], ...],
             now: float) -> None:
        old = self._gauges.get(node, {})
        gauges: dict[tuple[int, str], list[tuple[float, float]]] = {}
        for gpu, name, value in readings:
            if name in H.HEALTH_COUNTERS:
                trace = self._traces.setdefault((node, gpu, name), _Trace(now))
                trace.add(now, value, self.windows.span(name))
                continue
            # a gauge this scrape lacks starts again when it returns: a gap is no evidence
            points = gauges[(gpu, name)] = old.get((gpu, name), [])
            points.append((now, value))
            cut = bisect_right(points, (now - self.windows.heat, float("inf"))) - 1
            if cut > 0:
                del points[:cut]
        self._gauges[node] = gauges

    def _clock_events(self, node: str, now: float) -> tuple[tuple[int, str, float], ...]:
        """(GPU, cause, seconds) of the clock events in every reading of their history."""
        found = []
        for (gpu, name), points in sorted(self._gauges.get(node, {}).items()):
            metric, _, event = name.partition(":")
            if metric == H.CLOCK_EVENTS and min(v for _, v in points) > 0:
                found.append((gpu, event, now - points[0][0]))
        return tuple(found)

    def _rises(self, node: str, readings: tuple[tuple[int, str, float], ...],
               now: float) -> tuple[CounterRise, ...]:
        rises = []
        for gpu, name, _ in readings:
            found = self._traces.get((node, gpu, name))
            if found is not None:
                rise, seconds = found.rise(now, self.windows.span(name))
                if rise > 0 and seconds > 0:
                    rises.append(CounterRise(gpu, name, rise, seconds))
        return tuple(rises)

    def _gone(self, node: str, health: GpuHealth, now: float) -> tuple[GpuId, ...]:
        """GPUs seen on the node within the lookback that it no longer reports, in a PCI
        slot no GPU answers from now (a GPU replaced in its slot is no loss)."""
        seen = self._uuids.setdefault(node, {})
        uuids = {gpu.uuid for gpu in health.present if gpu.uuid}
        slots = {gpu.pci_bus_id for gpu in health.present if gpu.pci_bus_id}
        for gpu in health.present:
            if gpu.uuid:
                seen[gpu.uuid] = (gpu, now)
        for uuid in [u for u, (_, when) in seen.items() if when < now - self.windows.lookback]:
            del seen[uuid]
        if not uuids:
            return ()
        return tuple(sorted((g for uuid, (g, _) in seen.items()
                             if uuid not in uuids and g.pci_bus_id not in slots),
                            key=lambda g: (g.gpu, g.uuid)))

    def _heat(self, node: str, health: GpuHealth, now: float) -> tuple[GpuHeat, ...]:
        """Every GPU's gauges over the throttle span, when one of them is hot all along."""
        windows = self.windows
        models = {gpu.gpu: gpu.model for gpu in health.present}
        gauges = self._gauges.get(node, {})
        heat = []
        for gpu in sorted(models):
            temps, clocks = gauges.get((gpu, TEMP), []), gauges.get((gpu, SM_CLOCK), [])
            if not temps or not clocks:
                continue
            memory = gauges.get((gpu, H.MEMORY_TEMP), [])
            utils = gauges.get((gpu, UTIL), [])
            heat.append(GpuHeat(
                gpu, min(v for _, v in temps), min(v for _, v in memory) if memory else None,
                max(v for _, v in clocks),
                sum(v for _, v in utils) / len(utils) if utils else 0.0,
                now - temps[0][0], models[gpu]))
        hot = any(h.temp_min >= windows.temp_c or (
            h.memory_temp_min is not None and h.memory_temp_min >= windows.memory_temp_c)
            for h in heat)
        return tuple(heat) if hot else ()


def with_evidence(origin: str, health: Mapping[str, GpuHealth], now: float, book: HealthBook,
                  prometheus: str | PrometheusOptions | None) -> dict[str, GpuHealth]:
    """The health an XID read found (``origin`` ``prometheus`` or ``exporters``) with its
    counters' evidence: from Prometheus' history in one more query (none when that query
    fails: the counts stand), or from the session's scrapes."""
    if origin == "prometheus" and prometheus:
        options = (prometheus if isinstance(prometheus, PrometheusOptions)
                   else PrometheusOptions(prometheus))
        try:
            return query_health(options, health, now, book.windows)
        except SourceError:
            return dict(health)
    if origin == "exporters":
        return book.apply(health, now)
    return dict(health)
