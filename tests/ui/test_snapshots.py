"""SVG snapshots of the shell's views at 80x24 and 160x48 (frozen data, frozen clock).

Regenerate on purpose with ``pytest tests/ui/test_snapshots.py --snapshot-update`` and look
at the SVGs before committing them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.ui.conftest import FrozenApp
from tests.ui.helpers import settle_for_snapshot

SIZES = [(80, 24), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nodes_view(snap_compare: Any, frozen_app: FrozenApp, size: tuple[int, int]) -> None:
    assert snap_compare(frozen_app("driver-crashloop"), terminal_size=size,
                        run_before=settle_for_snapshot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nodes_filtered_marked(snap_compare: Any, frozen_app: FrozenApp,
                               size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        await pilot.press("space", "o", "O", "slash", *"h100", "enter")
        await settle_for_snapshot(pilot)

    assert snap_compare(frozen_app("upgrade-rolling"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_findings_view(snap_compare: Any, frozen_app: FrozenApp, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        await pilot.press("4")
        await settle_for_snapshot(pilot)

    assert snap_compare(frozen_app("upgrade-failed"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_view(snap_compare: Any, frozen_app: FrozenApp, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        await pilot.press("question_mark")
        await settle_for_snapshot(pilot)

    assert snap_compare(frozen_app("healthy"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nodes_with_metrics(snap_compare: Any, frozen_app: FrozenApp,
                            size: tuple[int, int]) -> None:
    """Fixed metrics: the utilisation column of the rows on screen and the fleet line."""
    from gputui.domain.metrics import FleetMetrics, MetricsOrigin, MetricsReading
    from gputui.ui.contracts import MetricsUpdated

    async def run_before(pilot: Any) -> None:
        await settle_for_snapshot(pilot)
        app = pilot.app
        names = app.screen.table.rows_on_screen()
        util = {name: float((i * 37) % 101) for i, name in enumerate(names)}
        fleet = FleetMetrics("fleet", 56, 41, 67.0, (names[0], 3, 86.0), 2)
        origin = MetricsOrigin("prometheus", "http://prometheus:9090", app.clock() - 2)
        app.post_message(MetricsUpdated(MetricsReading(origin, fleet, None, util)))
        await settle_for_snapshot(pilot)

    assert snap_compare(frozen_app("driver-crashloop"), terminal_size=size, run_before=run_before)
