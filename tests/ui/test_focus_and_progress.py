"""One visible focus and a dialog that shows its state (issue 29, items 2, 8 and 9).

- The selected row carries a ``▶`` that a screen reader or ``tmux capture-pane`` sees (a
  highlight is only a colour) in the node list, the upgrade lanes and time to GPU's nodes;
  the detail pane's border names its node and says when it has the keys (after ``enter``
  the arrow keys move its stages, not the list).
- While an action runs the dialog offers no ``Confirm (y)`` (``y`` could do nothing): it says
  it runs and what ``esc`` and ``b`` do, and ``y`` says so too.
- A drain stopped after its cordon says the node stays cordoned and offers ``u``, which
  plans the uncordon of that node.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Button, Static, TabbedContent

from gputui.sim.cluster import EmulatedCluster
from gputui.ui.app import GpuTuiApp
from gputui.ui.screens.confirm import ConfirmScreen, ParamPrompt
from gputui.ui.screens.joins import JoinsScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.mark_column import ARROW
from tests.actions.conftest import gpu_pod
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import LiveApp, cluster, live_app, ready, until

__all__ = ["cluster", "live_app"]  # the live cluster's fixtures, shared with test_actions


def _title(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _first_cells(table: LineTable, column: str) -> dict[str, str]:
    """Row key -> the text of its ``column`` cell."""
    return {key: table.get_cell(key, column).plain for key in table.row_keys}


async def test_the_selected_row_carries_an_arrow_in_every_node_table(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        table = screen.table
        marks = _first_cells(table, "mark")
        assert [n for n, cell in marks.items() if cell.startswith(ARROW)] == [
            table.selected_node]
        await pilot.press("down")
        await settle(pilot)
        marks = _first_cells(table, "mark")
        assert [n for n, cell in marks.items() if cell.startswith(ARROW)] == [
            table.selected_node]
        await pilot.press("2")
        await settle(pilot)
        lanes = app.screen
        assert isinstance(lanes, UpgradesScreen)
        await pilot.press("down")
        await settle(pilot)
        nodes = _first_cells(lanes.lanes, "node")
        arrowed = [key for key, cell in nodes.items() if cell.startswith("▶ ")]
        assert arrowed == [lanes.lanes.current_node]
        await pilot.press("colon", *"joins", "enter")
        await settle(pilot)
        joins = app.screen
        assert isinstance(joins, JoinsScreen)
        await pilot.press("enter", "down")
        await settle(pilot)
        cells = _first_cells(joins.nodes, "node")
        assert [key for key, cell in cells.items() if cell.startswith("▶ ")] == [
            joins.nodes.selected]


async def test_the_detail_pane_names_its_node_and_says_when_it_has_the_keys(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        tabs = screen.query_one("#node-detail-tabs", TabbedContent)
        node = screen.table.selected_node
        assert tabs.border_title == f"Pipeline: {node}"
        await pilot.press("enter")
        await settle(pilot)
        assert str(tabs.border_title).startswith(f"▶ Pipeline: {node} · keys here")
        await pilot.press("escape")  # back to the list: the keys leave the pane
        await settle(pilot)
        assert screen.table.has_focus
        await pilot.press("down")
        await settle(pilot)
        moved = screen.table.selected_node
        assert moved != node and tabs.border_title == f"Pipeline: {moved}"
        await pilot.press("space")  # a mark: the actions act on it, not on the shown node
        await settle(pilot)
        shown = screen.table.selected_node
        assert tabs.border_title == f"Pipeline: {shown} · actions: the 1 marked"


async def test_a_running_drain_offers_no_confirm_and_a_stopped_one_offers_uncordon(
        live_app: LiveApp, cluster: EmulatedCluster) -> None:
    cluster.store.create("pods", gpu_pod("infer-0", "gpu-1", owner=("ReplicaSet", "infer"),
                                         labels={"app": "infer"}, gpus=1))
    app: GpuTuiApp = live_app()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        # every prompt names the node before anything is chosen (before: "Drain: Drain
        # options", "Drain: Seconds to keep retrying ...", no node anywhere)
        assert _title(app.screen, "#prompt-title").startswith("Drain for gpu-1: Drain options")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                    and app.screen.spec.name == "timeout")
        assert _title(app.screen, "#prompt-title").startswith("Drain for gpu-1: Seconds")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert _title(dialog, "#confirm-title") == "Drain gpu-1"
        await pilot.press("y")
        progress = dialog.query_one("#confirm-progress", Static)
        await until(pilot, lambda: "trainer-pdb" in str(progress.render()))
        # running: no Confirm button and no y in the footer; the status says what runs
        assert not dialog.query_one("#confirm-yes", Button).display
        status = str(dialog.query_one("#confirm-status", Static).render())
        assert status.startswith("Running: esc stops it, b keeps it running")
        assert "confirm" not in {b.binding.action for b in dialog.active_bindings.values()
                                 if b.enabled and b.binding.show}
        notes.clear()
        await pilot.press("y")
        await until(pilot, lambda: any("already confirmed and running" in n for n in notes))
        await pilot.press("escape")
        await until(pilot, lambda: dialog.result is not None)
        # stopped after the cordon: said, with u; the dialog stays to offer it
        assert any("gpu-1 stays cordoned (uncordon: u)" in n for n in notes)
        assert app.screen is dialog
        status = str(dialog.query_one("#confirm-status", Static).render())
        assert status == "Stopped: esc closes; gpu-1 stays cordoned: u uncordons"
        assert dialog.query_one("#confirm-uncordon", Button).display
        assert cluster.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen is not dialog and app.screen.dry_run is not None)
        again = app.screen
        assert isinstance(again, ConfirmScreen)
        assert again.plan.action_id == "uncordon" and again.targets == ("gpu-1",)
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, NodesScreen))
        await until(pilot, lambda: not app.snapshot.nodes["gpu-1"].cordoned)
