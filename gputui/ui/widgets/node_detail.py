"""``NodeDetail``: the selected node's facts, the "describe" tab of the main screen.

It only renders what the snapshot says about one node (see
:mod:`gputui.ui.render.node_detail` for what and why); it never fetches.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.ui.render.node_detail import render_node_detail
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from gputui.ui.widgets.palette_mixin import widget_palette


class NodeDetail(NodeScopedMixin, VerticalScroll):
    """The describe tab: pool, GPUs, driver and kernel, labels, upgrade, MIG, pods, findings."""

    def compose(self) -> ComposeResult:
        yield Static(id="node-detail-body")

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the describe tab shows no metrics (the metrics tab does)."""

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#node-detail-body", Static).update(
            render_node_detail(self.node, self._now, widget_palette(self)))

    def on_mount(self) -> None:
        self._redraw()
