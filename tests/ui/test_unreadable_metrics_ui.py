"""Metrics that cannot be read, in the TUI (Pilot, real HTTP): the header says GPU health is
unknown and why, GPU metric columns show ``?`` and rows are not ``✔ ok`` (issue 26: against
a pod proxy answering 503 the rows said ``✔ ok`` and the header said nothing)."""

from __future__ import annotations

from pathlib import Path

from gputui.session import session_of
from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.connect import open_metrics, open_source
from gputui.ui.app import make_app
from gputui.ui.node_rows import no_util, node_cells
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.status_header import HeaderState, render_header
from tests.sources.helpers import NODES, NS, seed_gpu_nodes
from tests.ui.helpers import header_lines, until

REASON = "503 from the pod proxy on 3 of 3 exporters"


async def test_failing_exporters_make_the_header_say_gpu_health_unknown_and_cells_question(
        api_only: EmulatedCluster, tmp_path: Path) -> None:
    seed_gpu_nodes(api_only)
    api_only.inject("status:503~/proxy/metrics")
    settings = Settings(kubeconfig=str(api_only.write_kubeconfig(tmp_path / "kc")),
                        namespace=NS, read_only=True, refresh=0.5)
    source = open_source(settings, watch_timeout=5)
    app = make_app(settings, session_of(settings, source, metrics=open_metrics(settings, source)))
    app.min_snapshot_interval = 0.0
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: len(app.snapshot.nodes) == 3 and not app.snapshot.loading)
        await until(pilot, lambda: any("GPU health" in line for line in header_lines(app)))
        gaps = next(line for line in header_lines(app) if "GPU health" in line)
        assert gaps.startswith(f"⚠ metrics: cannot read ({REASON}) · GPU health"), gaps
        assert "3 unknown" in header_lines(app)[1] or "? findings unknown" in header_lines(app)[1]
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await until(pilot, lambda: screen.table.row_count == 3)
        for name in NODES:
            await until(pilot, lambda: screen.table.get_cell(name, "util").plain == "?")
            assert screen.table.get_cell(name, "finding").plain == "? unknown"
            assert app.snapshot.nodes[name].health_unknown == REASON


def test_the_gap_line_fits_80_columns_and_keeps_gpu_health_unknown() -> None:
    snapshot = ClusterSnapshot(generated_at=1.0, unreadable={"metrics": REASON},
                               nodes={"a": NodeView("a", health_unknown=REASON)})
    lines = render_header(HeaderState(snapshot, SourceStatus(Connection.LIVE), 1.0),
                          80).plain.splitlines()
    assert len(lines[2]) <= 80 and lines[2].endswith("· GPU health unknown"), lines
    assert lines[2].startswith("⚠ metrics: cannot read (503 from the pod proxy")
    assert "? findings unknown" in lines[1]
    forbidden = ClusterSnapshot(generated_at=1.0, unreadable={"metrics": "forbidden"})
    line = render_header(HeaderState(forbidden, SourceStatus(Connection.LIVE), 1.0),
                         80).plain.splitlines()[2]
    assert line.startswith("⚠ cannot read metrics (403): GPU health")


def test_a_node_whose_gpu_health_is_unknown_is_never_ok() -> None:
    blind, ok = NodeView("a", health_unknown=REASON), NodeView("b")
    assert node_cells(blind)["finding"] == ("? unknown", "unknown")
    assert node_cells(ok)["finding"] == ("✔ ok", "ok")
    assert no_util(blind) == ("?", "unknown") and no_util(ok)[0] == ""
