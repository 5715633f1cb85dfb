"""``MigScreen`` (``:mig``): every MIG-capable node's GPUs drawn as slices.

The summary line says how many nodes are pending or failed; below, one card per node with
desired and applied config, state and how long, strategy, the slices per GPU and the
configs that node offers (journey 5: choose a node, pick a layout it actually has).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widget import Widget
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.render.mig import summary_line
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.mig_layout import MigLayout
from gputui.ui.widgets.palette_mixin import widget_palette


class MigScreen(GpuScreen):
    """MIG layouts; up/down choose a node, enter opens its pipeline, l its MIG manager log."""

    VIEW = "mig"
    DEFAULT_CLASSES = "mig-screen"

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0

    def compose_body(self) -> Iterable[Widget]:
        yield Static(id="mig-summary")
        yield MigLayout(id="mig-layout")

    def on_mount(self) -> None:
        self.layout_widget.focus()

    @property
    def layout_widget(self) -> MigLayout:
        """The cards."""
        return self.query_one("#mig-layout", MigLayout)

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Redraw the summary and patch the cards."""
        self._snapshot = snapshot
        self._now = now
        if not self.is_mounted:
            return
        self.query_one("#mig-summary", Static).update(
            summary_line(snapshot.mig, widget_palette(self)))
        self.layout_widget.show_snapshot(snapshot, now)

    def show_node(self, node_name: str | None) -> None:
        """Select ``node_name``'s card (a jump from a finding or the node list)."""
        if self.is_mounted:
            self.layout_widget.show_node(node_name)

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the MIG view shows layouts, not metrics."""

    def selected_nodes(self) -> Selection:
        """The node whose card carries the cursor (``▶``)."""
        node = self.layout_widget.cursor if self.is_mounted else None
        return Selection.of((node,), "no MIG-capable node is shown")
