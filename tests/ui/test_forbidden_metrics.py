"""A viewer without ``get pods/proxy`` in the TUI: the metrics tab says it once, and the
exporters are not asked again every refresh (issue 18: 1,260 refused scrapes in 3.5 min)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_metrics, open_source
from gputui.ui.app import make_app
from gputui.ui.widgets.metrics_pane import MetricsPane
from tests.ui.conftest import settle
from tests.ui.helpers import until

MESSAGE = "metrics: forbidden (pods/proxy)"


@pytest.fixture
def viewer_cluster(request_log: list[tuple[str, str]]) -> Iterator[EmulatedCluster]:
    cluster = EmulatedCluster("healthy", speed=20, deny="get:pods/proxy").start()
    try:
        yield cluster
    finally:
        cluster.stop()


async def test_the_metrics_tab_says_forbidden_once_and_scrapes_stop(
        request_log: list[tuple[str, str]], viewer_cluster: EmulatedCluster,
        tmp_path: Path) -> None:
    settings = Settings(kubeconfig=str(viewer_cluster.write_kubeconfig(tmp_path / "kc")),
                        refresh=0.5)
    source = open_source(settings, watch_timeout=5)
    metrics = open_metrics(settings, source)
    app = make_app(settings, session_of(settings, source, metrics=metrics))
    app.min_snapshot_interval = 0.0
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.snapshot.nodes and not app.snapshot.loading)
        await settle(pilot)
        await pilot.press("m")
        pane = app.screen.query_one(MetricsPane)
        await until(pilot, lambda: MESSAGE in pane._reading.origin.error)
        first = sum(1 for _, path in request_log if "/proxy/" in path)
        read = metrics.readings
        await until(pilot, lambda: metrics.readings >= read + 6)  # six refreshes, none scrapes
        await settle(pilot)
        console = Console(record=True, width=160, file=io.StringIO())
        console.print(pane.query_one("#metrics-body", Static).content)
        assert console.export_text().count(MESSAGE) == 1  # one line, not one per node
        notes = [str(n.message) for n in app._notifications]
        assert not any(MESSAGE in note for note in notes)  # in the pane, not toasts
    scrapes = sum(1 for _, path in request_log if "/proxy/" in path)
    # one probe by the metrics feed and one by the XID reader, then nothing for minutes
    assert scrapes - first == 0 and first <= 2, (first, scrapes)
