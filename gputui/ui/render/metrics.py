"""The metrics pane: where the numbers come from, then each GPU's fixed-scale sparklines.

First line: the source, how fresh, and any fallback ("exporter scrape via the API server's
pod proxy, 2 s ago · Prometheus unreachable since 14:02:11"). Then per GPU (per MIG
instance, labelled by profile): utilisation (0-100 %), framebuffer (0-total), temperature
(0-100 °C), power (0-limit) and SM clock (0-the model's maximum), each a braille sparkline
with the current value beside it, the pods the exporter maps to the GPU, and its last XID
with meaning and age (from the node's ``xid-error`` findings, so the pane and ``check``
agree), and its health: remapped rows, PCIe replays, NVLink errors, throttling, each "not
exported" where absent (:mod:`gputui.ui.render.gpu_health`). Last, the node's metrics
findings with their hints.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from gputui.domain import catalogue as C
from gputui.domain.fleet import mig_devices
from gputui.domain.metrics import (
    EMPTY_METRICS,
    GpuMetrics,
    MetricsOrigin,
    MetricsReading,
    NodeMetrics,
    Trace,
    gpu_spec,
    last_value,
)
from gputui.domain.inputs import GpuHealth
from gputui.domain.model import Finding, NodeView, StageStatus
from gputui.domain.timefmt import duration
from gputui.domain.xid import xid_meaning
from gputui.ui.render.gpu_health import HEALTH_CODES, health_line
from gputui.ui.render.sparkline import braille_line
from gputui.ui.render.style import PLAIN, STATUS_SYMBOL, Palette, severity_word

#: dcgm-exporter's metrics port (``/metrics``), reached through the pod proxy
EXPORTER_PORT = 9400
#: finding codes this pane explains
METRIC_CODES = (C.XID_ERROR, C.GPU_MISSING, C.ROW_REMAP_FAILURE, C.GPU_COUNT_DROPPED,
                *HEALTH_CODES)
#: seconds a GPU's series may lag the node's others before it counts as gone
STALE_AFTER = 30.0
LABEL_WIDTH = 7
VALUE_WIDTH = 20
GIB = 1024.0


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def source_line(origin: MetricsOrigin, now: float, palette: Palette = PLAIN) -> Text:
    """Which source, how fresh, and the fallback taken."""
    names = {"prometheus": f"Prometheus {origin.where}",
             "exporter": "exporter scrape via the API server's pod proxy",
             "nvml": origin.where or "local NVML", "none": "no metrics source",
             "replay": f"recorded metrics ({origin.where})" if origin.where else "recording"}
    text = Text(names.get(origin.kind, origin.kind), style="bold")
    if origin.updated_at:
        text.append(f", {duration(now - origin.updated_at)} ago")
    elif origin.kind not in ("none", "replay"):
        text.append(", waiting for the first reading", style=palette.role("muted"))
    if origin.fallback:
        since = f" since {_clock(origin.since)}" if origin.since else ""
        text.append(f" · {origin.fallback}{since}", style=palette.role("warn"))
    return text


def exporter_line(node: NodeView, namespace: str | None, palette: Palette = PLAIN) -> Text:
    """The node's dcgm-exporter pod, named from the pipeline stage, with its state."""
    stage = node.pipeline.stage("dcgm-exporter")
    text = Text("dcgm-exporter: ")
    if stage is None or not stage.pod:
        why = stage.detail if stage is not None and stage.detail else "no dcgm-exporter pod"
        text.append(f"none on this node ({why})", style=palette.role("warn"))
        return text
    ns = stage.namespace or namespace or "?"
    text.append(f"pod {ns}/{stage.pod}", style="bold")
    text.append(f" port {EXPORTER_PORT} /metrics ")
    text.append(f"({STATUS_SYMBOL[stage.status]} {stage.status.value})",
                style=palette.status(stage.status))
    if stage.status is not StageStatus.READY:
        text.append(": it must be ready before it can be scraped", style=palette.role("muted"))
    return text


def _values(trace: Trace) -> list[float]:
    return [v for _, v in trace]


def _row(label: str, trace: Trace, high: float, value: str, width: int) -> Text:
    spark = max(4, width - LABEL_WIDTH - VALUE_WIDTH - 1)
    line = Text(f"{label:<{LABEL_WIDTH}}", no_wrap=True)
    line.append(braille_line(_values(trace), 0.0, high, spark))
    line.append(f" {value}")
    return line


def _number(value: float | None, unit: str, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f} {unit}"


def _last_time(gpu: GpuMetrics) -> float:
    return max((trace[-1][0] for trace in (gpu.util, gpu.temp, gpu.fb_used) if trace),
               default=0.0)


def gone_since(gpu: GpuMetrics, latest: float) -> float:
    """When the GPU's series stopped while the node's others went on (0: they did not).

    After XID 79 a GPU's series end and only its XID gauge stays; its history still
    shows what it was doing, but its last value is not a current one.
    """
    last = _last_time(gpu)
    samples = [t for t, _ in (gpu.util or gpu.temp)]
    step = (samples[-1] - samples[0]) / (len(samples) - 1) if len(samples) > 1 else 0.0
    return last if last and latest - last > max(3 * step, STALE_AFTER) else 0.0


def gpu_rows(gpu: GpuMetrics, width: int) -> list[Text]:
    """The five sparklines of one GPU on their fixed scales."""
    spec = gpu_spec(gpu.model)
    limit = gpu.power_limit or (spec.power_limit_w if spec else 0.0)
    power_high = limit or max(_values(gpu.power) or [1.0])
    sm_high = max([spec.sm_clock_max_mhz if spec else 0.0] + _values(gpu.sm_clock) + [1.0])
    used, total = last_value(gpu.fb_used), gpu.fb_total
    memory = "–" if used is None else f"{used / GIB:.1f} / {total / GIB:.1f} GiB"
    power = last_value(gpu.power)
    power_text = _number(power, "W") if not limit or power is None else \
        f"{power:.0f} / {limit:.0f} W"
    return [
        _row("util", gpu.util, 100.0, _number(last_value(gpu.util), "%"), width),
        _row("mem", gpu.fb_used, total or 1.0, memory, width),
        _row("temp", gpu.temp, 100.0, _number(last_value(gpu.temp), "°C"), width),
        _row("power", gpu.power, power_high, power_text, width),
        _row("sm", gpu.sm_clock, sm_high, _number(last_value(gpu.sm_clock), "MHz"), width),
    ]


def _xid_line(gpu: GpuMetrics, findings: Sequence[Finding], palette: Palette) -> Text | None:
    finding = next((f for f in findings if f.code == C.XID_ERROR
                    and f.subject == f"gpu{gpu.gpu}"), None)
    if finding is not None:
        line = Text(f"{severity_word(finding.severity)}  ",
                    style=palette.severity(finding.severity))
        line.append(finding.message.split(": ", 1)[-1])
        return line
    if gpu.xid:
        return Text(f"last XID {gpu.xid} ({xid_meaning(gpu.xid)})", style=palette.role("warn"))
    return None


def gpu_block(gpu: GpuMetrics, findings: Sequence[Finding], width: int,
              palette: Palette = PLAIN, latest: float = 0.0,
              health: GpuHealth | None = None) -> RenderableType:
    """Title line (GPU, model, pods), the sparklines, the last XID, and the GPU's health
    (``health``: the node's, on the GPU's first row only)."""
    title = Text(gpu.label, style="bold", no_wrap=True, overflow="ellipsis")
    if gpu.model:
        title.append(f"  {gpu.model.removeprefix('NVIDIA ')}", style=palette.role("muted"))
    title.append("  " + (", ".join(gpu.pods) if gpu.pods else "no pod"),
                 style="" if gpu.pods else palette.role("muted"))
    lines: list[RenderableType] = [title]
    gone = gone_since(gpu, latest)
    if not (gpu.util or gpu.temp or gpu.fb_used):
        lines.append(Text("  no readings: the GPU reports only its XID series "
                          "(gone from DCGM's view)", style=palette.role("crit")))
    else:
        lines += [Padding(row, (0, 0, 0, 2)) for row in gpu_rows(gpu, width - 2)]
        if gone:
            lines.append(Text(f"  no readings since {_clock(gone)}: the values above are the "
                              "last ones (gone from DCGM's view)", style=palette.role("crit")))
    xid = _xid_line(gpu, findings, palette)
    if xid is not None:
        lines.append(Padding(xid, (0, 0, 0, 2)))
    state = health_line(health, gpu.gpu, findings, palette)
    if state is not None:
        lines.append(Padding(state, (0, 0, 0, 2)))
    return Group(*lines)


def findings_text(node: NodeView, palette: Palette = PLAIN) -> RenderableType:
    """The node's metrics findings with their hints, or a line saying there are none."""
    found = [f for f in node.findings if f.code in METRIC_CODES]
    if not found:
        return Text("no XID, missing GPU or row-remap finding for this node",
                    style=palette.role("muted"))
    lines: list[RenderableType] = []
    for finding in found:
        line = Text(f"{severity_word(finding.severity)}  ", style=palette.severity(finding.severity))
        line.append(finding.message, style="")
        lines.append(line)
        if finding.hint:
            lines.append(Padding(Text(finding.hint, style=palette.role("muted")), (0, 0, 0, 4)))
    return Group(*lines)


def heading_count(node: NodeView, metrics: NodeMetrics | None) -> str:
    """What the pane shows, counted as the header counts (``GPUs 104/104 (56 MIG)``): whole
    GPUs, and MIG devices named so, e.g. ``56 MIG devices on 8 GPUs``. Without readings the
    node's labels speak: under ``single`` GFD's ``gpu.count`` counts MIG devices (product
    ``<model>-MIG-<profile>``, k8s-device-plugin ``internal/lm/mig-strategy.go``)."""
    if metrics is not None and any(g.instance for g in metrics.gpus):
        whole = {g.gpu for g in metrics.gpus if not g.instance}
        parents = {g.gpu for g in metrics.gpus if g.instance}
        devices = sum(1 for g in metrics.gpus if g.instance)
        mig = f"{_many(devices, 'MIG device')} on {_many(len(parents), 'GPU')}"
        return f"{_many(len(whole), 'GPU')} + {mig}" if whole else mig
    if "-MIG-" in node.product and node.gpu_count:
        return _many(node.gpu_count, "MIG device")
    devices = mig_devices(node)
    return f"{node.gpu_count or '?'} GPUs" + (
        f" ({_many(devices, 'MIG device')})" if devices else "")


def _many(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_metrics(node: NodeView | None, namespace: str | None,
                   reading: MetricsReading = EMPTY_METRICS, now: float = 0.0,
                   palette: Palette = PLAIN, width: int = 80) -> RenderableType:
    """The whole pane body for ``node`` from ``reading`` (``width``: the pane's columns)."""
    head: list[RenderableType] = [source_line(reading.origin, now, palette)]
    if reading.origin.error:  # a replay's "not recorded" is no failed read
        said = "" if reading.origin.kind == "replay" else "last read failed: "
        head.append(Text(f"{said}{reading.origin.error}", style=palette.role("warn")))
    if node is None:
        return Group(*head, Text("no node selected", style=palette.role("muted")))
    metrics = reading.node if reading.node is not None and reading.node.node == node.name else None
    head.append(Text.assemble((node.name, "bold"), f"  {heading_count(node, metrics)}  "
                              f"{node.product}", no_wrap=True, overflow="ellipsis"))
    body: list[RenderableType] = []
    if metrics is None or not metrics.gpus:
        body.append(Text("no GPU readings for this node yet", style=palette.role("muted")))
        if reading.origin.kind in ("exporter", "none"):
            body.append(exporter_line(node, namespace, palette))
    else:
        latest = max((_last_time(g) for g in metrics.gpus), default=0.0)
        shown: set[int] = set()
        for gpu in metrics.gpus:
            health = node.gpu_health if gpu.gpu not in shown else None
            shown.add(gpu.gpu)
            body.append(gpu_block(gpu, node.findings, width, palette, latest, health))
    return Group(*head, Text(""), *body, Text(""), Text("Metrics findings", style="bold"),
                 Padding(findings_text(node, palette), (0, 0, 0, 2)))
