"""Metrics through the app: readings flow in as messages, what is visible flows out, and a
source that never answers does not hold up a key press."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from gputui.session import session_of
from gputui.domain.metrics import (
    EMPTY_METRICS,
    FleetMetrics,
    MetricsOrigin,
    MetricsReading,
    MetricsWant,
)
from gputui.settings import Settings
from gputui.sources.metrics import MetricsFeed
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.ui.app import make_app
from gputui.ui.contracts import MetricsUpdated
from gputui.ui.widgets.metrics_pane import MetricsPane
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import settle


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback port that accepts connections and never answers (a hung Prometheus)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def _app(feed: MetricsFeed | None) -> Any:
    recording = load_recording("driver-crashloop", SCENARIOS)
    app = make_app(Settings(), session_of(Settings(), ReplaySource.from_recording(recording), clock=lambda: recording.now, metrics=feed))
    app.min_snapshot_interval = 0.0
    return app


async def test_a_hung_prometheus_never_holds_up_keys(silent_server: str) -> None:
    feed = MetricsFeed(prometheus=PrometheusMetrics(PrometheusOptions(silent_server,
                                                                      timeout=30.0)),
                       refresh=1.0)
    app = _app(feed)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.table
        first = table.selected_node
        await pilot.press("down", "down")
        await settle(pilot)
        assert table.selected_node != first and app.screen.selected == table.selected_node
        await pilot.press("m")  # the metrics tab says it is waiting, not frozen
        await settle(pilot)
        assert feed.readings == 0  # the first read is still hanging on the silent server
        pane = app.screen.query_one(MetricsPane)
        assert pane._reading is EMPTY_METRICS and pane.node is not None
        assert pane.node.name == table.selected_node


async def test_readings_reach_the_table_pane_and_header_and_visible_rows_reach_the_feed(
) -> None:
    feed = MetricsFeed(refresh=3600.0)  # no source: this test plays the feed's part
    app = _app(feed)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        names = screen.table.rows_on_screen()
        await pilot.press("m")
        await settle(pilot)
        reading = MetricsReading(MetricsOrigin("prometheus", "http://p:9090", app.clock() - 1),
                                 FleetMetrics("fleet", 40, 30, 75.0, None, 0),
                                 None, {names[0]: 98.0})
        app.post_message(MetricsUpdated(reading))
        await settle(pilot)
        cell = screen.table.get_cell(names[0], "util")
        assert str(cell).endswith("98%")
        assert app.metrics is reading
        header = app.screen.query_one("StatusHeader")
        assert "GPUs 30 busy / 10 idle" in str(header.render())
        want = feed._want
        assert isinstance(want, MetricsWant)
        assert want.selected == screen.selected and set(want.visible) == set(names)
        # only nodes whose dcgm-exporter is ready are offered for scraping
        ready = {n for n in names if (stage := app.snapshot.nodes[n].pipeline.stage(
            "dcgm-exporter")) is not None and stage.status.value == "ready"}
        assert set(want.exporters) == ready and ready
