"""A node's :class:`GpuHealth` in a recording, and back.

Older files hold ``[gpus reported, [row-remap-failed GPUs]]``; the health counters'
evidence (rises, exported counters, heat, gone GPUs, how it was measured) follows as a third
element only when there is some, so a replay and ``check --replay`` judge the health
findings from what the session judged them from. Raw scrape readings are never recorded
(the counter book has turned them into evidence before a snapshot is built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gputui.domain.inputs import CounterRise, GpuHealth, GpuHeat, GpuId


def health_to_json(health: GpuHealth) -> list[Any]:
    """``health`` as a recording row."""
    row: list[Any] = [health.gpus_reported, list(health.row_remap_failed)]
    if (health.rises or health.exported or health.heat or health.gone or health.origin
            or health.clock_events):
        row.append({
            "rises": [[r.gpu, r.counter, r.rise, r.seconds] for r in health.rises],
            "exported": sorted(health.exported),
            "heat": [[h.gpu, h.temp_min, h.memory_temp_min, h.sm_clock, h.util, h.seconds,
                      h.model] for h in health.heat],
            "gone": [[g.gpu, g.uuid, g.pci_bus_id, g.model] for g in health.gone],
            "origin": health.origin, "window": health.window,
            "clock_events": [list(e) for e in health.clock_events]})
    return row


def health_from_json(row: Sequence[Any]) -> GpuHealth:
    """A recording row back (a bad shape raises TypeError/ValueError/KeyError)."""
    gpus, failed = row[0], row[1]
    health = GpuHealth(int(gpus), tuple(int(i) for i in failed))
    if len(row) < 3:
        return health
    extra = dict(row[2])
    return GpuHealth(
        health.gpus_reported, health.row_remap_failed,
        rises=tuple(CounterRise(int(g), str(c), float(r), float(s))
                    for g, c, r, s in extra.get("rises") or ()),
        exported=frozenset(str(n) for n in extra.get("exported") or ()),
        heat=tuple(GpuHeat(int(g), float(t), None if m is None else float(m), float(c),
                           float(u), float(s), str(model))
                   for g, t, m, c, u, s, model in extra.get("heat") or ()),
        gone=tuple(GpuId(int(g), str(u), str(p), str(m))
                   for g, u, p, m in extra.get("gone") or ()),
        origin=str(extra.get("origin") or ""), window=float(extra.get("window") or 0.0),
        clock_events=tuple((int(g), str(e), float(s))
                           for g, e, s in extra.get("clock_events") or ()))
