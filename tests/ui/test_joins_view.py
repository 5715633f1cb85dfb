"""``:joins``: time to GPU per pool, then a pool's nodes (Pilot and an 80x24 snapshot on the
recorded ``staggered-joins`` scenario, frozen clock)."""

from __future__ import annotations

from typing import Any

from gputui.domain.model import NodeView
from gputui.domain.timefmt import duration
from gputui.ui.render.node_detail import render_node_detail
from gputui.ui.screens.joins import JoinsScreen
from gputui.ui.screens.nodes import NodesScreen
from tests.ui.conftest import FrozenApp, settle


def _cells(table: Any, key: str) -> list[str]:
    return [cell.plain for cell in table.get_row(key)]


def _by_state(app: Any, state: str) -> list[NodeView]:
    return [n for n in app.snapshot.nodes.values() if n.join is not None and n.join.state == state]


async def test_pools_then_nodes_then_a_node_pipeline(frozen_app: FrozenApp) -> None:
    app = frozen_app("staggered-joins")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"joins", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JoinsScreen) and app.current_mode == "joins"
        pools = {p.pool: p for p in app.snapshot.joins}
        assert set(pools) == {"a100", "h100", "l4"}
        h100 = _cells(screen.pools, "h100")
        assert h100[:2] == ["h100", "5"] and h100[5] == "driver ready"
        assert h100[6] == "▲ 1 slow"  # the straggler, past 2 x p90
        assert _cells(screen.pools, "a100")[2] == "10 min"  # the slow pool's 9 min builds
        # down to h100's nodes: the joining ones first, then slowest first
        await pilot.press("down", "enter")
        await settle(pilot)
        assert screen.nodes.has_focus and screen.selected_pool() is pools["h100"]
        straggler, newcomer = (j.node for j in pools["h100"].joining)
        # each row's first cell: "▶ " on the cursor's row, "  " on the others, then the name
        rows = [screen.nodes.get_row_at(i)[0].plain[2:] for i in range(screen.nodes.row_count)]
        assert rows[:2] == [straggler, newcomer]
        assert _cells(screen.nodes, straggler)[1:3] == ["▲ 15 min so far", "→ driver ready"]
        newcomer_for = duration(app.clock() - pools["h100"].joining[1].since)
        assert _cells(screen.nodes, newcomer)[1:3] == [f"◐ {newcomer_for} so far",
                                                        "→ driver ready"]
        done = next(n for n in _by_state(app, "done") if n.pool == "h100")
        shares = " / ".join(duration(s) for s in done.join.stage_seconds())  # type: ignore
        assert _cells(screen.nodes, done.name)[2] == shares
        unknown = [n.name for n in _by_state(app, "unknown") if n.pool == "h100"]
        assert _cells(screen.nodes, unknown[0])[1] == "? unknown"
        # esc goes back up to the pools, not out of the view
        await pilot.press("escape")
        await settle(pilot)
        assert screen.pools.has_focus and app.current_mode == "joins"
        # p on a node opens its pipeline
        await pilot.press("enter", "p")
        await settle(pilot)
        assert app.current_mode == "nodes" and isinstance(app.screen, NodesScreen)
        assert app.screen.table.selected_node == straggler


def test_describe_says_the_join(frozen_app: FrozenApp) -> None:
    from tests.fixtures import SCENARIOS
    from tests.fixtures.recordings import load_recording

    recording = load_recording("staggered-joins", SCENARIOS)
    snapshot = recording.snapshot()
    now = recording.now
    joining = next(n for n in snapshot.nodes.values()
                   if n.join is not None and n.join.state == "joining"
                   and (n.join.elapsed(now) or 0) < 300)
    done = next(n for n in snapshot.nodes.values() if n.join is not None
                and n.join.state == "done" and n.pool == "a100")
    from rich.console import Console

    def text(node: NodeView) -> str:
        console = Console(width=160, record=True)
        console.print(render_node_detail(node, now))
        return console.export_text()

    since = duration(now - joining.join.joined)  # type: ignore[union-attr,operator]
    assert f"JOIN       ◐ joining for {since}, waiting for driver ready" in text(joining)
    assert "GPUs allocatable 10 min after joining (driver 9 min · toolkit 11 s" in text(done)


def test_joins_view_80x24(snap_compare: Any, frozen_app: FrozenApp) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("colon", *"joins", "enter")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)

    assert snap_compare(frozen_app("staggered-joins"), terminal_size=(80, 24),
                        run_before=run_before)
