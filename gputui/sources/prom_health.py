"""GPU health counters from Prometheus' history, in ONE query whatever the fleet size.

Each health counter's rise comes from ``increase()``, which handles counter resets (an
exporter or node restart), over the window of its kind (memory errors over the XID
lookback, rates over the health window), aggregated per GPU with ``max by`` so a GPU whose
series split when its pod changed is not counted twice; ``> 0`` keeps the answer as small as
the trouble. The same query says which health counters the fleet exports at all
(``count by (__name__)``; the opt-in throttle evidence per node), which GPUs a node
reported within the lookback and no longer does (``last_over_time ... unless on (pci_bus_id)``: the GPU a ``gpu-count-dropped`` names;
a GPU replaced in its slot is no loss), and,
on nodes with a GPU at its slowdown temperature for the whole throttle span, every GPU's
lowest temperatures, highest SM clock and average utilisation (the throttle fallback), and
the throttling clock events dcgm-exporter reported in every window of the throttle span. Both
``Hostname`` (dcgm-exporter releases) and ``hostname`` (its HEAD) are grouped on at once:
a series lacks one of them, whose value is then "".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth, GpuHeat, GpuId
from gputui.domain.metrics import SM_CLOCK, TEMP, UTIL, host_of
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.promread import Row, gpu_index

HOSTS = "Hostname, hostname"
#: the heat rows: tag -> (gauge, its range function)
HEAT_ROWS = {"temp": (TEMP, "min_over_time"), "memtemp": (H.MEMORY_TEMP, "min_over_time"),
             "clock": (SM_CLOCK, "max_over_time"), "util": (UTIL, "avg_over_time")}


def _tag(expr: str, tag: str, extra: str = "") -> str:
    tagged = f'label_replace({expr}, "q", "{tag}", "", "")'
    return f'label_replace({tagged}, "counter", "{extra}", "", "")' if extra else tagged


def health_query(windows: H.HealthWindows) -> str:
    """The one PromQL query of the health counters, exported names, gone GPUs and heat."""
    parts = [_tag(f"max by ({HOSTS}, gpu) (increase({name}[{int(windows.span(name))}s])) > 0",
                  "rise", name) for name in H.HEALTH_COUNTERS]
    names = "|".join((*H.HEALTH_COUNTERS, H.CLOCK_EVENTS))
    parts.append(_tag(f'count by (__name__) ({{__name__=~"{names}"}})', "exported"))
    opt_in = "|".join((*H.VIOLATIONS, H.CLOCK_EVENTS))
    parts.append(_tag(f'count by ({HOSTS}, __name__) ({{__name__=~"{opt_in}"}})', "throttle"))
    lookback = int(windows.lookback)
    parts.append(_tag(
        f"count by ({HOSTS}, gpu, UUID, pci_bus_id, modelName) "
        f"(last_over_time({TEMP}[{lookback}s])) unless on ({HOSTS}, pci_bus_id) {TEMP}",
        "gone"))
    span = f"{int(windows.heat)}s"
    events = "|".join(H.CLOCK_EVENT_CAUSES)
    parts.append(_tag(f"max by ({HOSTS}, gpu, clock_event) (min_over_time({H.CLOCK_EVENTS}"
                      f'{{clock_event=~"{events}"}}[{span}])) > 0', "clockevent"))
    hot = (f"(max by ({HOSTS}, gpu) (min_over_time({TEMP}[{span}])) >= {windows.temp_c:g}) or "
           f"(max by ({HOSTS}, gpu) (min_over_time({H.MEMORY_TEMP}[{span}])) >= "
           f"{windows.memory_temp_c:g})")
    for tag, (gauge, over) in HEAT_ROWS.items():
        parts.append(_tag(f"max by ({HOSTS}, gpu, modelName) ({over}({gauge}[{span}])) "
                          f"and on ({HOSTS}) ({hot})", tag))
    return " or ".join(parts)


@dataclass
class _Node:
    rises: list[CounterRise] = field(default_factory=list)
    #: the throttle evidence the node exports (violation counters, clock events): which
    #: of them judges it, or the heat fallback
    throttle: set[str] = field(default_factory=set)
    clock_events: list[tuple[int, str, float]] = field(default_factory=list)
    gone: list[GpuId] = field(default_factory=list)
    heat: dict[int, dict[str, float | str]] = field(default_factory=dict)


def _heat(gpu: int, values: Mapping[str, float | str], seconds: float) -> GpuHeat | None:
    temp, clock = values.get("temp"), values.get("clock")
    if not isinstance(temp, float) or not isinstance(clock, float):
        return None
    memory, util = values.get("memtemp"), values.get("util")
    return GpuHeat(gpu, temp, memory if isinstance(memory, float) else None, clock,
                   util if isinstance(util, float) else 0.0, seconds,
                   str(values.get("model", "")))


def read_rows(rows: Iterable[Row], windows: H.HealthWindows
              ) -> tuple[frozenset[str], dict[str, _Node]]:
    """(the health counters exported, node -> what the query said of it)."""
    exported: set[str] = set()
    nodes: dict[str, _Node] = {}
    for labels, value in rows:
        kind = labels.get("q", "")
        if kind == "exported":
            exported.add(labels.get("__name__", ""))
            continue
        node = host_of(labels)
        if not node or value is None:
            continue
        entry = nodes.setdefault(node, _Node())
        gpu = gpu_index(labels)
        if kind == "throttle":
            entry.throttle.add(labels.get("__name__", ""))
        elif kind == "rise" and labels.get("counter") in H.HEALTH_COUNTERS:
            counter = labels["counter"]
            entry.rises.append(CounterRise(gpu, counter, value, windows.span(counter)))
        elif kind == "clockevent":
            entry.clock_events.append((gpu, labels.get("clock_event", ""), windows.heat))
        elif kind == "gone":
            entry.gone.append(GpuId(gpu, labels.get("UUID", ""), labels.get("pci_bus_id", ""),
                                    labels.get("modelName", "")))
        elif kind in HEAT_ROWS:
            heat = entry.heat.setdefault(gpu, {})
            heat[kind] = value
            heat["model"] = labels.get("modelName", "") or str(heat.get("model", ""))
    return frozenset(exported & {*H.HEALTH_COUNTERS, H.CLOCK_EVENTS}), nodes


def with_counters(health: Mapping[str, GpuHealth], exported: frozenset[str],
                  nodes: Mapping[str, _Node], windows: H.HealthWindows
                  ) -> dict[str, GpuHealth]:
    """``health`` (GPU counts and row remaps) with each node's rises, gone GPUs and heat.
    Nodes the count did not see are left out: a node without readings is not judged."""
    out = {}
    for name, found in health.items():
        entry = nodes.get(name, _Node())
        heat = tuple(h for gpu in sorted(entry.heat)
                     if (h := _heat(gpu, entry.heat[gpu], windows.heat)) is not None)
        own = (exported - {*H.VIOLATIONS, H.CLOCK_EVENTS}) | (exported & entry.throttle)
        out[name] = replace(found, rises=tuple(sorted(entry.rises, key=_order)),
                            exported=own, heat=heat,
                            gone=tuple(sorted(entry.gone, key=lambda g: (g.gpu, g.uuid))),
                            clock_events=tuple(sorted(entry.clock_events)),
                            origin="prometheus", window=windows.window)
    return out


def _order(rise: CounterRise) -> tuple[int, str]:
    return rise.gpu, rise.counter


def read_health(prometheus: PrometheusMetrics, health: Mapping[str, GpuHealth], now: float,
                windows: H.HealthWindows) -> dict[str, GpuHealth]:
    """``health`` with the counters' evidence from one query at ``now`` (raises
    :class:`~gputui.sources.errors.SourceError` as every query does)."""
    exported, nodes = read_rows(prometheus.instant(health_query(windows), now), windows)
    return with_counters(health, exported, nodes, windows)


def query_health(options: PrometheusOptions, health: Mapping[str, GpuHealth], now: float,
                 windows: H.HealthWindows) -> dict[str, GpuHealth]:
    """:func:`read_health` on a client of its own (closed after)."""
    prometheus = PrometheusMetrics(options)
    try:
        return read_health(prometheus, health, now, windows)
    finally:
        prometheus.close()
