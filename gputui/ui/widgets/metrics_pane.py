"""``MetricsPane``: where the selected node's DCGM metrics will come from, and its XIDs.

It shows no numbers until a metrics source feeds it (a later feature); the source line is
derived from the settings (``--prometheus-url``) and the snapshot (the node's dcgm-exporter
pod), both read, never fetched.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.render.metrics import render_metrics
from gputui.ui.widgets.palette_mixin import widget_palette


class MetricsPane(VerticalScroll):
    """The metrics tab of the selected node."""

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._node_name: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="metrics-body")

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Keep the snapshot (for the exporter pod and XID findings) and redraw."""
        self._snapshot = snapshot
        self._draw()

    def show_node(self, node_name: str | None) -> None:
        """Show ``node_name``."""
        self._node_name = node_name
        self._draw()

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        node = self._snapshot.nodes.get(self._node_name) if self._node_name else None
        settings = getattr(self.app, "settings", None)
        url = getattr(settings, "prometheus_url", None)
        self.query_one("#metrics-body", Static).update(render_metrics(
            node, self._snapshot.operator_namespace, url, widget_palette(self)))

    def on_mount(self) -> None:
        self._draw()
