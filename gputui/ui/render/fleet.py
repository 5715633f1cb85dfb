"""The header's fleet line: GPUs with health findings, average utilisation, GPUs busy/idle,
hottest GPU, recent XIDs.

"GPUs" counts what the header's ``GPUs allocatable/total`` counts: whole GPUs and MIG
devices, the MIG devices named in brackets (``GPUs 40 busy / 64 idle (56 MIG)``).

Shown under the two status lines once a metrics source has answered; it says what the
figures cover (the whole fleet from Prometheus, or only the nodes on screen when the
exporters are scraped directly), so a partial view is never read as the fleet.
"""

from __future__ import annotations

from rich.text import Text

from gputui.domain.metrics import FleetMetrics
from gputui.ui.render.style import PLAIN, Palette

#: a GPU at or above this temperature (°C) is shown in the warning colour
HOT_C = 85.0


def fleet_line(fleet: FleetMetrics, width: int, palette: Palette = PLAIN,
               unhealthy: int = 0) -> Text:
    """One line, truncated to ``width``; ``unhealthy``: GPUs with a GPU-health finding of
    warning or worse (from the snapshot, so it counts what ``check`` reports), said first
    so a narrow terminal keeps it."""
    line = Text(no_wrap=True)
    line.append(f"{fleet.scope}: ", style="bold")
    if unhealthy:
        line.append(f"{unhealthy} GPU{'' if unhealthy == 1 else 's'} with health findings",
                    style=palette.colour("crit"))
        line.append(" │ ")
    line.append(f"util {fleet.avg_util:.0f}% │ GPUs {fleet.busy} busy / {fleet.idle} idle")
    if fleet.mig_devices:  # counted as the header counts them: MIG devices among the GPUs
        line.append(f" ({fleet.mig_devices} MIG)")
    if fleet.hottest is not None:
        node, gpu, temp = fleet.hottest
        style = palette.colour("warn") if temp >= HOT_C else ""
        line.append(" │ hottest ")
        line.append(f"{temp:.0f}°C", style=style)
        line.append(f" {node}/gpu{gpu}")
    line.append(" │ ")
    xids = f"{fleet.xids_last_hour} XID{'s' if fleet.xids_last_hour != 1 else ''} in 1 h"
    line.append(xids, style=palette.colour("crit" if fleet.xids_last_hour else "ok"))
    line.truncate(width, overflow="ellipsis")
    return line
