"""The metrics pane before metrics exist: where they will come from, and nothing fake.

DCGM sparklines arrive with the metrics feature. Until then an honest pane is worth more
than a pretty one: it names the source gputui will use for this node (Prometheus when
configured or found, else this node's dcgm-exporter pod through the API server's pod proxy,
else local NVML) and lists the node's XID findings, which the domain already knows.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from gputui.domain.model import NodeView, StageStatus
from gputui.ui.render.style import PLAIN, STATUS_SYMBOL, Palette, severity_word

#: dcgm-exporter's metrics port (``/metrics``), reached through the pod proxy
EXPORTER_PORT = 9400


def exporter_line(node: NodeView, namespace: str | None, palette: Palette = PLAIN) -> Text:
    """The node's dcgm-exporter pod, named from the pipeline stage, with its state."""
    stage = node.pipeline.stage("dcgm-exporter")
    text = Text("2. else this node's dcgm-exporter through the API server's pod proxy: ")
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


def sources_text(node: NodeView, namespace: str | None, prometheus_url: str | None,
                 palette: Palette = PLAIN) -> Group:
    """The three sources in the order gputui will try them."""
    prom = Text("1. Prometheus: ")
    if prometheus_url:
        prom.append(prometheus_url, style="bold")
        prom.append(" (--prometheus-url)")
    else:
        prom.append("--prometheus-url not set; gputui will look for one in the cluster",
                    style=palette.role("muted"))
    nvml = Text("3. else local NVML, when gputui itself runs on this GPU node")
    return Group(prom, exporter_line(node, namespace, palette), nvml)


def xid_text(node: NodeView, palette: Palette = PLAIN) -> RenderableType:
    """The node's ``xid-error`` findings with their hints, or a line saying there are none."""
    xids = [f for f in node.findings if f.code == "xid-error"]
    if not xids:
        return Text("no XID errors reported for this node", style=palette.role("muted"))
    lines: list[RenderableType] = []
    for finding in xids:
        line = Text(f"{severity_word(finding.severity)}  ", style=palette.severity(finding.severity))
        line.append(finding.message, style="")
        lines.append(line)
        if finding.hint:
            lines.append(Padding(Text(finding.hint, style=palette.role("muted")), (0, 0, 0, 4)))
    return Group(*lines)


def render_metrics(node: NodeView | None, namespace: str | None, prometheus_url: str | None,
                   palette: Palette = PLAIN) -> RenderableType:
    """The whole pane body for ``node``."""
    if node is None:
        return Text("no node selected", style=palette.role("muted"))
    return Group(
        Text.assemble((node.name, "bold"), f"  {node.gpu_count or '?'} GPUs  {node.product}"),
        Text("No GPU metrics yet: utilisation, memory, temperature and power sparklines "
             "come with the metrics feature. Nothing here is estimated.",
             style=palette.role("info")),
        Text(""),
        Text("Where they will come from", style="bold"),
        Padding(sources_text(node, namespace, prometheus_url, palette), (0, 0, 0, 2)),
        Text(""),
        Text("XID errors", style="bold"),
        Padding(xid_text(node, palette), (0, 0, 0, 2)),
    )
