"""One-node panes redraw only when what they show can have changed (5,000-node fluidity)."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from gputui.ui.widgets.node_detail import NodeDetail
from tests.ui.panes.data import BROKEN, NOW, pipeline_snapshot
from tests.ui.panes.host import HostApp


class CountingDetail(NodeDetail):
    """NodeDetail that counts its draws."""

    draws = 0

    def _draw(self) -> None:
        self.draws += 1
        super()._draw()


async def test_same_node_view_is_not_redrawn_but_a_changed_one_is() -> None:
    snapshot = pipeline_snapshot()
    pane = CountingDetail()
    app = HostApp(snapshot, widget=pane)
    async with app.run_test() as pilot:
        pane.show_snapshot(snapshot, NOW)
        pane.show_node(BROKEN)
        await pilot.pause()
        settled = pane.draws
        pane.show_snapshot(snapshot, NOW + 1)          # same NodeView, same age bucket
        pane.show_node(BROKEN)
        assert pane.draws == settled
        changed = dataclasses.replace(snapshot.nodes[BROKEN], cordoned=True)
        nodes = MappingProxyType({**snapshot.nodes, BROKEN: changed})
        pane.show_snapshot(dataclasses.replace(snapshot, nodes=nodes), NOW + 1)
        assert pane.draws == settled + 1
        pane.show_snapshot(dataclasses.replace(snapshot, nodes=nodes), NOW + 60)  # ages move
        assert pane.draws == settled + 2
