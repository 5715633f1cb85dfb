"""``UpgradesScreen`` (``:upgrades``): the driver upgrade across the cluster.

Top to bottom: the policy line, the slot line, a ``blocked`` banner when the controller is
stopped, the lane counts in state order, the lanes table, and the selected node in full
(why it waits, its last ``GPUDriverUpgrade`` event). The screen only renders what the app
hands it; nodes move lane to lane as snapshots arrive and the cursor follows its node.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.render.upgrades import (
    blocked_text,
    flow_text,
    node_side_text,
    policy_line,
    policy_unread,
    selected_text,
    slot_text,
)
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.palette_mixin import widget_palette
from gputui.ui.widgets.upgrade_lanes import UpgradeLanes

#: columns the age column, indents and cell padding take besides the node names
_FIXED_COLUMNS = 16
#: from this width the selected node sits beside the lanes, with its pods
WIDE_COLUMNS = 140
#: width of that side panel (keep in step with styles/upgrades.tcss)
SIDE_COLUMNS = 60


class UpgradesScreen(GpuScreen):
    """Upgrade lanes, policy and slots; enter on a node opens its pipeline."""

    VIEW = "upgrades"
    DEFAULT_CLASSES = "upgrades-screen"

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0

    def compose_body(self) -> Iterable[Widget]:
        yield Static(id="upgrades-policy")
        yield Static(id="upgrades-slots")
        yield Static(id="upgrades-blocked")
        yield Static(id="upgrades-flow")
        with Horizontal(id="upgrades-body"):
            yield UpgradeLanes(id="upgrades-lanes")
            yield Static(id="upgrades-selected")

    def on_mount(self) -> None:
        self.query_one(UpgradeLanes).focus()

    @property
    def lanes(self) -> UpgradeLanes:
        """The lanes table."""
        return self.query_one("#upgrades-lanes", UpgradeLanes)

    # --- the contract -------------------------------------------------------------------

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Redraw the policy, slots and lanes from ``snapshot``."""
        self._snapshot = snapshot
        self._now = now
        if not self.is_mounted:
            return
        view = snapshot.upgrade
        palette = widget_palette(self)
        self.query_one("#upgrades-policy", Static).update(
            policy_line(view, policy_unread(snapshot)))
        self.query_one("#upgrades-slots", Static).update(slot_text(view, palette))
        banner = self.query_one("#upgrades-blocked", Static)
        text = blocked_text(view, palette)
        banner.display = text is not None
        banner.update(text or "")
        self.query_one("#upgrades-flow", Static).update(flow_text(view, palette))
        lanes = self.lanes
        wide = self.size.width >= WIDE_COLUMNS
        self.set_class(wide, "-wide")
        names = max((len(name) for name in view.nodes), default=20)
        side = SIDE_COLUMNS if wide else 0
        lanes.set_reason_width(self.size.width - names - _FIXED_COLUMNS - side)
        lanes.show_view(view, now)
        self._show_selected(lanes.current_node)

    def show_node(self, node_name: str | None) -> None:
        """Put the cursor on ``node_name`` (a jump from a finding or the node list)."""
        if self.is_mounted:
            self.lanes.select_node(node_name)

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the upgrade view shows lanes and slots, not metrics."""

    def selected_nodes(self) -> Selection:
        """The node under the lanes' cursor (none on a lane heading)."""
        node = self.lanes.current_node if self.is_mounted else None
        return Selection.of((node,), "the cursor is on a lane heading, not a node"
                            if self.is_mounted and self.lanes.row_count
                            else "no node is in an upgrade lane")

    def _show_selected(self, node: str | None) -> None:
        status = self._snapshot.upgrade.nodes.get(node) if node else None
        palette = widget_palette(self)
        text = selected_text(status, self._now, palette,
                             managed=len(self._snapshot.upgrade.nodes))
        if self.has_class("-wide") and node:
            text.append("\n\n")
            text.append_text(node_side_text(self._snapshot.nodes.get(node), self._now, palette))
        self.query_one("#upgrades-selected", Static).update(text)

    def on_upgrade_lanes_node_highlighted(self, message: UpgradeLanes.NodeHighlighted) -> None:
        self._show_selected(message.node)

    def on_resize(self) -> None:
        self.show_snapshot(self._snapshot, self._now)
