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


async def test_describe_pane_shows_the_cluster_finding_that_names_the_node() -> None:
    """A stalled upgrade queue is one cluster-level finding listing its waiting nodes
    (``Finding.nodes``); a waiting node's describe pane says so instead of "no findings",
    and redraws when that finding appears although the node's own view did not change."""
    from gputui.domain.model import Finding, Severity
    from tests.ui.panes.data import HEALTHY

    snapshot = pipeline_snapshot()
    pane = NodeDetail()
    app = HostApp(snapshot, widget=pane)
    async with app.run_test() as pilot:
        pane.show_snapshot(snapshot, NOW)
        pane.show_node(HEALTHY)
        await pilot.pause()
        assert "✔ no findings" in _shown(pane)
        queue = Finding("upgrade-stalled", Severity.WARNING, None,
                        "upgrade queue stalled: 4 of 4 slots held by 4 failed nodes; "
                        "1 node waiting", "Fix the failed nodes.", "upgrade",
                        nodes=(HEALTHY,))
        pane.show_snapshot(dataclasses.replace(snapshot, findings=(queue,)), NOW)
        await pilot.pause()
        shown = _shown(pane)
        assert "upgrade-stalled (cluster): upgrade queue stalled" in shown
        assert "no findings" not in shown and "Findings (1)" in shown


def _shown(pane: NodeDetail) -> str:
    from textual.widgets import Static

    from tests.ui.helpers import rendered_text

    return rendered_text(pane.query_one("#node-detail-body", Static).content, width=160)
