"""One line of health per GPU in the metrics pane: remapped rows, PCIe replays, NVLink errors,
throttling.

Each part says what the node's counters did over their window (from the snapshot's
:class:`~gputui.domain.inputs.GpuHealth`, the same evidence ``check`` judges), or "not
exported" where the exporter does not export the counter: dcgm-exporter's default list
leaves the NVLink error and throttle-violation counters out, and silence is not health.
The line takes the colour of the GPU's worst health finding.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from gputui.domain import catalogue as C
from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth
from gputui.domain.model import Finding
from gputui.ui.render.style import Palette

#: the codes whose findings colour a GPU's health line
HEALTH_CODES = (C.GPU_MEMORY_ERROR, C.PCIE_REPLAYS, C.NVLINK_ERRORS, C.GPU_THROTTLED)
NOT_EXPORTED = "not exported"


def _rises(health: GpuHealth, gpu: int, names: Sequence[str]) -> list[CounterRise]:
    return [r for r in health.rises if r.gpu == gpu and r.counter in names]


def _exported(health: GpuHealth, names: Sequence[str]) -> bool:
    return bool(health.exported & set(names))


def rows_part(health: GpuHealth, gpu: int) -> str:
    """Remapped rows (and retired pages, DBE ECC) over the lookback."""
    if not _exported(health, H.MEMORY_COUNTERS):
        return f"rows {NOT_EXPORTED}"
    bad = sum(r.rise for r in _rises(health, gpu, H.MEMORY_ERRORS))
    good = sum(r.rise for r in _rises(health, gpu, (H.CORRECTABLE_REMAPPED_ROWS,)))
    if not bad and not good:
        return "rows: no new remap"
    parts = [f"+{bad:g} uncorrectable" if bad else "", f"+{good:g} correctable" if good else ""]
    return "rows: " + ", ".join(p for p in parts if p)


def pcie_part(health: GpuHealth, gpu: int) -> str:
    """PCIe replays over the window, as a rate."""
    if not _exported(health, (H.PCIE_REPLAY,)):
        return f"PCIe replays {NOT_EXPORTED}"
    rises = _rises(health, gpu, (H.PCIE_REPLAY,))
    if not rises:
        return "PCIe replays: none"
    rise = rises[0]
    rate = 60.0 * rise.rise / rise.seconds if rise.seconds > 0 else 0.0
    return f"PCIe replays: +{rise.rise:,.0f} ({rate:,.0f}/min)"


def nvlink_part(health: GpuHealth, gpu: int) -> str:
    """NVLink CRC, replay and recovery errors over the window."""
    if not _exported(health, H.NVLINK_ERRORS):
        return f"NVLink errors {NOT_EXPORTED}"
    total = sum(r.rise for r in _rises(health, gpu, H.NVLINK_ERRORS))
    return f"NVLink errors: +{total:,.0f}" if total else "NVLink errors: none"


def throttle_part(health: GpuHealth, gpu: int, findings: Sequence[Finding]) -> str:
    """Time throttled and why, from the violation counters, else what the heat said."""
    if not _exported(health, tuple(H.VIOLATIONS)) and H.CLOCK_EVENTS in health.exported:
        events = sorted({e for g, e, _ in health.clock_events if g == gpu})
        return (f"clock events: {', '.join(events)}" if events
                else "no throttling clock event")
    if not _exported(health, tuple(H.VIOLATIONS)):
        hot = any(f.code == C.GPU_THROTTLED and f.subject == f"gpu{gpu}" for f in findings)
        return ("throttled: hot and slow (violation counters not exported)" if hot
                else f"throttle counters {NOT_EXPORTED}")
    rises = _rises(health, gpu, tuple(H.VIOLATIONS))
    if not rises:
        return "not throttled"
    span = max(r.seconds for r in rises)
    worst = max(rises, key=lambda r: r.rise)
    share = min(1.0, sum(r.rise for r in rises) / H.NS / span) if span > 0 else 0.0
    return f"throttled {share:.0%} ({H.VIOLATIONS[worst.counter]})"


def health_line(health: GpuHealth | None, gpu: int, findings: Sequence[Finding],
                palette: Palette) -> Text | None:
    """The GPU's health line, None when the node's metrics gave none."""
    if health is None:
        return None
    mine = [f for f in findings if f.code in HEALTH_CODES and f.subject == f"gpu{gpu}"]
    worst = max(mine, key=lambda f: f.severity.rank, default=None)
    style = palette.severity(worst.severity) if worst is not None else palette.role("muted")
    parts = (rows_part(health, gpu), pcie_part(health, gpu), nvlink_part(health, gpu),
             throttle_part(health, gpu, findings))
    return Text("health  " + " · ".join(parts), style=style)
