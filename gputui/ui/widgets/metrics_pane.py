"""``MetricsPane``: where the selected node's DCGM metrics will come from, and its XIDs.

It shows no numbers until a metrics source feeds it (a later feature); the source line is
derived from the settings (``--prometheus-url``) and the snapshot (the node's dcgm-exporter
pod), both read, never fetched.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.ui.render.metrics import render_metrics
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from gputui.ui.widgets.palette_mixin import widget_palette


class MetricsPane(NodeScopedMixin, VerticalScroll):
    """The metrics tab of the selected node."""

    def compose(self) -> ComposeResult:
        yield Static(id="metrics-body")

    def _draw_key(self) -> tuple[Any, ...]:
        return (*super()._draw_key(), self._snapshot.operator_namespace, self._prometheus_url())

    def _prometheus_url(self) -> str | None:
        if not self.is_mounted:
            return None
        settings = getattr(self.app, "settings", None)
        return getattr(settings, "prometheus_url", None)

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#metrics-body", Static).update(render_metrics(
            self.node, self._snapshot.operator_namespace, self._prometheus_url(),
            widget_palette(self)))

    def on_mount(self) -> None:
        self._redraw()
