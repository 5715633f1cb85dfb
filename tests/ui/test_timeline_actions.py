"""An action taken in the app reaches ``:timeline`` from the audit log as it ends, with who
took it, next to the change the following snapshots show (a real cordon through the
kubernetes client against the emulated API server)."""

from __future__ import annotations

from pathlib import Path

from gputui.sim.cluster import EmulatedCluster
from gputui.ui.screens.confirm import ConfirmScreen
from tests.ui.helpers import app_with_audit, ready, until


async def test_a_cordon_shows_as_an_action_with_who_and_as_the_change_it_made(
        one_node_cluster: EmulatedCluster, tmp_path: Path) -> None:
    notes: list[str] = []
    app, writer = app_with_audit(one_node_cluster, tmp_path, tmp_path / "audit.jsonl", notes)
    batches: list[list[str]] = []
    app.timelines.sink = lambda events: batches.append([e.kind for e in events])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app, nodes=1)
            assert len(app.timelines.timeline) == 0 and app.timelines.timeline.since is not None
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                        and app.screen.dry_run is not None)
            await pilot.press("y")
            await until(pilot, lambda: {e.kind for e in app.timelines.timeline.events()}
                        >= {"action", "cordon"})
            by_kind = {e.kind: e for e in app.timelines.timeline.events()}
            action = by_kind["action"]
            assert action.node == "gpu-1" and action.who  # the audit log's user
            assert action.text.startswith("cordon: ok: ")
            assert (by_kind["cordon"].node, by_kind["cordon"].text) == ("gpu-1", "cordoned")
            assert sorted(kind for batch in batches for kind in batch) == ["action", "cordon"]
            await pilot.press("colon", *"timeline", "enter")
            await until(pilot, lambda: app.current_mode == "timeline"
                        and app.screen.table.row_count >= 2)  # type: ignore[attr-defined]
            rows = [[c.plain for c in app.screen.table.get_row_at(i)]  # type: ignore[attr-defined]
                    for i in range(2)]
            assert {r[3] for r in rows} == {action.who, ""}
    finally:
        writer.close()
