"""``NodeDetail``: the selected node's facts, the "describe" tab of the main screen.

It only renders what the snapshot says about one node (see
:mod:`gputui.ui.render.node_detail` for what and why); it never fetches.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.render.node_detail import render_node_detail
from gputui.ui.widgets.palette_mixin import widget_palette


class NodeDetail(VerticalScroll):
    """The describe tab: pool, GPUs, driver and kernel, labels, upgrade, MIG, pods, findings."""

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0
        self._node_name: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="node-detail-body")

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Redraw from ``snapshot`` (ages against ``now``)."""
        self._snapshot = snapshot
        self._now = now
        self._draw()

    def show_node(self, node_name: str | None) -> None:
        """Show ``node_name``."""
        self._node_name = node_name
        self._draw()

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        node = self._snapshot.nodes.get(self._node_name) if self._node_name else None
        self.query_one("#node-detail-body", Static).update(
            render_node_detail(node, self._now, widget_palette(self)))

    def on_mount(self) -> None:
        self._draw()
