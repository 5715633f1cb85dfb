"""``MetricsPane``: the selected node's DCGM metrics, as given to it.

The pane fetches nothing and reads no settings: the screen hands it the snapshot
(``show_snapshot``) and the latest metrics reading (``show_metrics``), which the app receives
from the metrics feed's thread as :class:`~gputui.ui.contracts.MetricsUpdated` messages.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.domain.metrics import EMPTY_METRICS, MetricsReading
from gputui.ui.render.metrics import render_metrics
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from gputui.ui.widgets.palette_mixin import widget_palette


class MetricsPane(NodeScopedMixin, VerticalScroll):
    """The metrics tab of the selected node."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading: MetricsReading = EMPTY_METRICS
        self._drawn_shape: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="metrics-body")

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Take a new metrics reading (redrawn only when it differs)."""
        self._reading = reading
        self._now = max(self._now, now)
        self._redraw_if_changed()

    def _draw_key(self) -> tuple[Any, ...]:
        return (*super()._draw_key(), self._snapshot.operator_namespace, self._reading,
                self.size.width)

    def _shape(self, width: int) -> tuple[Any, ...]:
        """What decides the body's height: a new value needs a relayout, the same one not.

        A relayout of the screen is the expensive part of an update next to a 5,000-row
        table, and a refresh every second mostly moves sparklines within the same lines.
        """
        reading, node = self._reading, self.node
        gpus = reading.node.gpus if reading.node is not None else ()
        return (self._node_name, width, node.findings if node is not None else (),
                node is not None and node.gpu_health is not None,
                reading.node.node if reading.node is not None else None,
                tuple((g.label, bool(g.util or g.temp or g.fb_used), g.xid) for g in gpus),
                reading.origin.kind, reading.origin.fallback, reading.origin.error,
                bool(reading.origin.updated_at))

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        width = max(40, self.size.width - 2)
        shape = self._shape(width)
        relayout, self._drawn_shape = shape != self._drawn_shape, shape
        self.query_one("#metrics-body", Static).update(render_metrics(
            self.node, self._snapshot.operator_namespace, self._reading, self._now,
            widget_palette(self), width), layout=relayout)

    def on_mount(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw_if_changed()
