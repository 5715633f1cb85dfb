"""``NodeDetail``: the selected node's facts, the "describe" tab of the main screen.

It only renders what the snapshot says about one node (see
:mod:`gputui.ui.render.node_detail` for what and why); it never fetches.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import Finding
from gputui.ui.render.node_detail import naming, render_node_detail
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from gputui.ui.widgets.palette_mixin import widget_palette


class NodeDetail(NodeScopedMixin, VerticalScroll):
    """The describe tab: pool, GPUs, driver and kernel, labels, upgrade, MIG, pods, findings."""

    def compose(self) -> ComposeResult:
        yield Static(id="node-detail-body")

    def _cluster(self) -> tuple[Finding, ...]:
        """The cluster findings naming the shown node (a stalled queue lists its nodes)."""
        return naming(self._snapshot.findings, self._node_name) if self._node_name else ()

    def _draw_key(self) -> tuple[Any, ...]:
        return (*super()._draw_key(), self._cluster())

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the describe tab shows no metrics (the metrics tab does)."""

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#node-detail-body", Static).update(
            render_node_detail(self.node, self._now, widget_palette(self), self._cluster()))

    def on_mount(self) -> None:
        self._redraw()
