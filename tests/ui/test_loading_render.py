"""Before the lists are read the screen says "loading", never a value it does not know."""

from __future__ import annotations

import io
from dataclasses import replace
from types import MappingProxyType

from rich.console import Console, RenderableType

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, NodeView, SnapshotCounts
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.node_rows import node_cells
from gputui.ui.render.pipeline import banner
from gputui.ui.widgets.status_header import HeaderState, render_header


def text(renderable: RenderableType, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_header_before_anything_is_read_says_loading() -> None:
    header = text(render_header(HeaderState(EMPTY_SNAPSHOT), 100))
    assert "loading" in header and "◌ connecting…" in header
    assert "policy missing" not in header and "0 nodes" not in header


def test_header_with_nodes_but_not_pods_counts_nodes_and_waits_for_findings() -> None:
    snapshot = ClusterSnapshot(counts=SnapshotCounts(gpu_nodes=5000, gpus_total=40000,
                                                     gpus_allocatable=40000),
                               loading=frozenset({"pods", "clusterpolicies"}))
    header = text(render_header(HeaderState(snapshot), 100))
    assert "5000 nodes" in header and "findings loading" in header
    assert "◌ loading…" in header and "connecting" not in header  # the server has answered
    live = HeaderState(snapshot, SourceStatus(Connection.LIVE))  # feeds in, build not shown
    assert "◌ loading…" in text(render_header(live, 100))
    shown = HeaderState(replace(snapshot, loading=frozenset()), SourceStatus(Connection.LIVE))
    assert "● live" in text(render_header(shown, 100))
    assert "policy loading" in header and "with findings" not in header
    done = text(render_header(HeaderState(replace(snapshot, loading=frozenset())), 100))
    assert "0 with findings" in done and "policy missing" in done


def test_node_row_and_pipeline_of_a_loading_node() -> None:
    view = NodeView(name="n1", ready=True, loading=True)
    assert node_cells(view)["finding"][0] == "… loading"
    assert "loading" in text(banner(view))
    assert node_cells(replace(view, loading=False))["finding"][0] == "✔ ok"


def test_upgrades_policy_line_while_the_policy_loads_says_loading_not_none() -> None:
    """The upgrade policy comes from the ClusterPolicy (or NVIDIADrivers): before they are
    listed it is unknown, not absent; a 403 on them is unknown too."""
    from gputui.ui.render.upgrades import policy_line, policy_unread

    loading = policy_line(EMPTY_SNAPSHOT.upgrade, policy_unread(EMPTY_SNAPSHOT))
    assert "loading" in loading and "no driver upgrade policy" not in loading
    forbidden = replace(EMPTY_SNAPSHOT, loading=frozenset(),
                        unreadable=MappingProxyType({"clusterpolicies": "forbidden"}))
    unknown = policy_line(forbidden.upgrade, policy_unread(forbidden))
    assert "unknown" in unknown and "no driver upgrade policy" not in unknown
    read = replace(EMPTY_SNAPSHOT, loading=frozenset())
    assert policy_line(read.upgrade, policy_unread(read)).startswith("no driver upgrade policy")
