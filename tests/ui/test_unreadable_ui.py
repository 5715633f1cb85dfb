"""Unknown is not ok, in the TUI (Pilot, real HTTP): a viewer who may read nodes but not pods
sees the 403 in the header with what it hides, ``? unknown`` rows and unknown operands, never
``● live`` over ``✔ ok`` rows (issue 18, items 7 and 10c)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import Static

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.ui.app import make_app
from gputui.ui.screens.nodes import NodesScreen
from tests.sources.helpers import cluster_policy, node
from tests.ui.helpers import header_lines, until

NS = "gpu-operator"


def healthy_node(name: str) -> dict[str, Any]:
    """Ready, every GPU allocatable: nothing wrong that the Node alone shows."""
    made = node(name)
    made["status"].update(allocatable={"nvidia.com/gpu": "8"},
                          conditions=[{"type": "Ready", "status": "True"}])
    return made


def shown(screen: Any, selector: str) -> str:
    """The plain text a Static under ``screen`` currently shows."""
    content = screen.query_one(selector, Static).content
    if isinstance(content, str):
        return content
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(content)
    return console.export_text()


async def test_forbidden_pods_are_named_in_the_header_and_rows_are_unknown(
        api_only: EmulatedCluster, tmp_path: Path) -> None:
    for name in ("gpu-0", "gpu-1"):
        api_only.store.create("nodes", healthy_node(name))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    api_only.set_deny("list:pods,watch:pods,list:daemonsets.apps,watch:daemonsets.apps")
    settings = Settings(kubeconfig=str(api_only.write_kubeconfig(tmp_path / "kc")),
                        namespace=NS, read_only=True)
    app = make_app(settings, session_of(settings, open_source(settings, watch_timeout=5)))
    app.min_snapshot_interval = 0.0
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(app.snapshot.nodes) == 2 and not app.snapshot.loading)
        await until(pilot, lambda: len(header_lines(app)) >= 3)
        lines = header_lines(app)
        assert lines[2].startswith("⚠ cannot read daemonsets, pods (403): DaemonSets, "
                                   "pipelines, GPU pods unknown"), lines
        assert "? findings unknown" in lines[1] and "0 with findings" not in lines[1]
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await until(pilot, lambda: screen.table.row_count == 2)
        for name in ("gpu-0", "gpu-1"):
            assert screen.table.get_cell(name, "finding").plain == "? unknown"
        stages = app.snapshot.nodes["gpu-0"].pipeline.stages
        assert stages and {s.status.value for s in stages} == {"unknown"}
        screen.table.focus()
        await pilot.press("enter")  # the pipeline pane of the node under the cursor
        await until(pilot, lambda: "? unknown: cannot read" in shown(screen, "#pipeline-head"))
        assert "cannot read daemonsets, pods" in shown(screen, "#pipeline-head")
        body = shown(screen, "#pipeline-body")
        assert "driver" in body and "? unknown" in body and "absent" not in body
        assert "◀" not in body  # an unknown stage is not where the chain breaks


def test_header_gap_line_fits_80_columns_and_optional_gaps_are_not_unknown_rows() -> None:
    from gputui.domain.model import ClusterPolicyView, ClusterSnapshot, NodeView
    from gputui.sources.base import Connection, SourceStatus
    from gputui.ui.widgets.status_header import HeaderState, render_header

    required = ClusterSnapshot(generated_at=1.0, unreadable={
        "pods": "forbidden", "daemonsets": "forbidden", "clusterpolicies": "forbidden",
        "events": "forbidden"}, nodes={"a": NodeView("a", unknown=("pods",))},
        cluster_policy=ClusterPolicyView(state="unknown"))
    lines = render_header(HeaderState(required, SourceStatus(Connection.LIVE), 1.0),
                          80).plain.splitlines()
    assert len(lines) == 3 and len(lines[2]) <= 80
    assert lines[2].startswith("⚠ cannot read clusterpolicies, daemonsets, pods, events (403)")
    assert lines[1].startswith("policy unknown (403)") and "? findings unknown" in lines[1]
    wide = render_header(HeaderState(required, SourceStatus(Connection.LIVE), 1.0),
                         400).plain.splitlines()
    assert "; operand pipelines, GPU pods and the findings on them;" in wide[2]
    optional = ClusterSnapshot(generated_at=1.0, unreadable={"events": "forbidden"},
                               nodes={"a": NodeView("a")})
    lines = render_header(HeaderState(optional, SourceStatus(Connection.LIVE), 1.0),
                          80).plain.splitlines()
    assert lines[2].startswith("⚠ cannot read events (403): events unknown")
    assert "0 with findings" in lines[1]
    no_nodes = ClusterSnapshot(generated_at=1.0, unreadable={"nodes": "forbidden"})
    lines = render_header(HeaderState(no_nodes, SourceStatus(Connection.LIVE), 1.0),
                          80).plain.splitlines()
    assert lines[1].endswith("│ ? nodes, GPUs and findings unknown") and "0 nodes" not in lines[1]
    assert lines[2].startswith("⚠ cannot read nodes (403):")
    crd_absent = ClusterSnapshot(unreadable={"nvidiadrivers": "not-served"})
    assert len(render_header(HeaderState(crd_absent), 80).plain.splitlines()) == 2


def test_unknown_rows_sort_between_findings_and_ok() -> None:
    from gputui.domain.model import Finding, NodeView, Severity
    from gputui.ui.node_rows import node_cells, sort_value

    sick = NodeView("c", findings=(Finding("gpus-unavailable", Severity.WARNING, "c", "m", "h"),),
                    worst=Severity.WARNING, unknown=("pods",))
    unknown, ok = NodeView("a", unknown=("pods",)), NodeView("b")
    assert node_cells(unknown)["finding"] == ("? unknown", "unknown")
    assert node_cells(sick)["finding"][0].startswith("▲ warn gpus-unavailable")
    assert node_cells(ok)["finding"] == ("✔ ok", "ok")
    views = sorted([ok, unknown, sick], key=lambda v: sort_value("finding", v))  # type: ignore[arg-type,return-value]
    assert [v.name for v in views] == ["c", "a", "b"]


def test_node_detail_does_not_say_no_findings_when_its_inputs_are_unknown() -> None:
    from gputui.domain.model import NodeView
    from gputui.ui.render.node_detail import findings_block

    unknown = findings_block(NodeView("a", unknown=("pods",)))
    assert str(unknown) == ("? unknown: no findings in what could be read; pods cannot be "
                            "read")
    assert str(findings_block(NodeView("b"))) == "✔ no findings"
