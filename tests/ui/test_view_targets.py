"""Every action acts on the selection of the view it is started from (issue 29, item 1).

Before, an action took its targets from the node list's cursor whatever view the operator
was in: ``:mig-safe`` in the MIG view with an idle A100 selected planned against the node
list's cursor, an H100 with a running trainer; ``:cordon`` from the upgrade lanes planned
the node list's cursor; ``c`` in the upgrade lanes did nothing at all. Here, in each view
(nodes, upgrades, MIG, findings, time to GPU, timeline, ``:ops``) a node other than the node
list's cursor is selected, every node action is started by its key and by its ``:`` name,
and the first prompt (or the dialog) must name exactly that selection in its title; where
the view has no node selected the action says why and nothing is sent.

The cluster is the ``driver-crashloop`` recording's objects served by the emulated API
server (no controllers: nothing changes but what the test sends), read by the real source.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from gputui.session import session_of
from gputui.actions.base import Scope
from gputui.actions.registry import ACTIONS
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.contracts import CommandRequested
from gputui.ui.render.plan import targets_label
from gputui.ui.screens.base import GpuScreen
from gputui.ui.screens.confirm import ConfirmScreen, ParamPrompt
from gputui.ui.screens.findings import FindingsScreen
from gputui.ui.screens.joins import JoinsScreen
from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.operations import OperationsScreen
from gputui.ui.screens.timeline import TimelineScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import load_recording
from tests.ui.helpers import until

SCENARIO = "driver-crashloop"
NODE_ACTIONS = tuple(act for act in ACTIONS if act.scope is Scope.NODES)
#: (action id, how it is started): its key, then its first ``:`` name
TRIGGERS = tuple((act.id, trigger) for act in NODE_ACTIONS
                 for trigger in ((act.keys,) if act.keys else ()) + (f":{act.aliases[0]}",))


def seed(cluster: EmulatedCluster, scenario: str = SCENARIO) -> None:
    """The recording's nodes, pods, DaemonSets, ClusterPolicy and ConfigMaps, as served."""
    objects = load_recording(scenario, SCENARIOS).objects
    kinds: list[tuple[str, Any]] = [
        ("nodes", objects.nodes.values()), ("pods", objects.pods.values()),
        ("daemonsets.apps", objects.daemonsets.values()),
        ("clusterpolicies.nvidia.com", objects.cluster_policies),
        ("configmaps", objects.configmaps.values())]
    for kind, items in kinds:
        for item in items:
            made = copy.deepcopy(item)
            made["metadata"].pop("resourceVersion", None)
            cluster.store.create(kind, made)


@pytest.fixture
def cluster(request_log: list[tuple[str, str]]) -> Iterator[EmulatedCluster]:
    made = EmulatedCluster(run_controllers=False).start()
    seed(made)
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def app(cluster: EmulatedCluster, tmp_path: Path) -> Iterator[GpuTuiApp]:
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings = Settings(kubeconfig=str(config), namespace="gpu-operator",
                        audit_log=str(tmp_path / "audit.jsonl"))
    source = open_source(settings, watch_timeout=5)
    writer = writer_for_source(source, read_only=False)
    made = make_app(settings, session_of(settings, source, writer=writer))
    made.min_snapshot_interval = 0.0
    yield made
    if writer is not None:
        writer.close()


async def ready(pilot: Any, app: GpuTuiApp) -> str:
    """Every list read and the permissions known; the node list's cursor (its top row)."""
    await until(pilot, lambda: len(app.snapshot.nodes) == 5 and not app.snapshot.loading)
    await until(pilot, lambda: app.runner is not None and not app.runner.permissions.pending)
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    await until(pilot, lambda: screen.table.row_count == 5)
    cursor = screen.table.selected_node
    assert cursor is not None
    return cursor


def notes_of(app: GpuTuiApp) -> list[str]:
    """What the app says from now on (its notifications, as text)."""
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    return notes


async def start(pilot: Any, trigger: str) -> None:
    """Press the action's key, or type its ``:`` name."""
    if trigger.startswith(":"):
        await pilot.press("colon", *trigger[1:], "enter")
    else:
        await pilot.press(trigger)


async def expect_targets(pilot: Any, app: GpuTuiApp, view: type[GpuScreen],
                         expected: tuple[str, ...], what: str) -> None:
    """The first prompt (or the dialog) asks about ``expected`` and its title names them;
    then ``esc`` back to ``view``."""
    await until(pilot, lambda: isinstance(app.screen, (ParamPrompt, ConfirmScreen)))
    shown = app.screen
    if isinstance(shown, ParamPrompt):
        title = str(shown.query_one("#prompt-title", Static).render())
        assert f"for {targets_label(expected)}" in title, (what, title)
        assert shown.targets == expected, what
    else:
        assert isinstance(shown, ConfirmScreen)
        title = str(shown.query_one("#confirm-title", Static).render())
        assert all(name in title for name in expected), (what, title)
        assert shown.targets == expected, what
        assert set(shown.plan.targets) <= set(expected), what
    await pilot.press("escape")
    await until(pilot, lambda: isinstance(app.screen, view))


async def walk(pilot: Any, app: GpuTuiApp, view: type[GpuScreen],
               expected: tuple[str, ...]) -> None:
    """Every node action, by key and by ``:`` name, on ``expected``."""
    for action_id, trigger in TRIGGERS:
        await start(pilot, trigger)
        await expect_targets(pilot, app, view, expected, f"{action_id} by {trigger}")


async def pick(pilot: Any, selected: Callable[[], str | None], avoid: str) -> str:
    """Press ``down`` until the view selects a node other than ``avoid``."""
    for _ in range(30):
        node = selected()
        if node is not None and node != avoid:
            return node
        await pilot.press("down")
    raise AssertionError("no other node to select")


async def test_the_node_list_acts_on_its_marks_then_on_its_cursor(app: GpuTuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("down", "space")  # marks the second row, the cursor moves on
        marked = tuple(screen.table.marks)
        assert len(marked) == 1 and screen.table.selected_node not in (first, *marked)
        await walk(pilot, app, NodesScreen, marked)
        await pilot.press("escape")  # clears the marks: the cursor's node now
        assert not screen.table.marks
        cursor = screen.table.selected_node
        assert cursor is not None
        for key in ("c", "u", "r"):
            await start(pilot, key)
            await expect_targets(pilot, app, NodesScreen, (cursor,), key)


async def test_the_upgrade_lanes_act_on_their_node(app: GpuTuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        await pilot.press("2")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        screen = app.screen
        assert isinstance(screen, UpgradesScreen)
        await until(pilot, lambda: screen.lanes.row_count > 1)
        node = await pick(pilot, lambda: screen.lanes.current_node, first)
        await walk(pilot, app, UpgradesScreen, (node,))


async def test_the_mig_view_acts_on_its_card(app: GpuTuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        await pilot.press("3")
        await until(pilot, lambda: isinstance(app.screen, MigScreen))
        screen = app.screen
        assert isinstance(screen, MigScreen)
        await until(pilot, lambda: screen.layout_widget.cursor is not None)
        node = await pick(pilot, lambda: screen.layout_widget.cursor, first)
        await walk(pilot, app, MigScreen, (node,))
        # the palette runs the same path (it posts the command)
        app.post_message(CommandRequested("mig-config-safe"))
        await expect_targets(pilot, app, MigScreen, (node,), "palette: mig: safe change")


async def test_the_findings_act_on_the_finding_s_node(app: GpuTuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        await pilot.press("4")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen))
        screen = app.screen
        assert isinstance(screen, FindingsScreen)
        await until(pilot, lambda: screen.table.row_count > 1)

        def node_of() -> str | None:
            finding = screen.table.selected
            return finding.node if finding is not None else None

        node = await pick(pilot, node_of, first)
        await walk(pilot, app, FindingsScreen, (node,))


async def test_time_to_gpu_acts_on_the_pool_s_node(app: GpuTuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        await pilot.press("colon", *"joins", "enter")
        await until(pilot, lambda: isinstance(app.screen, JoinsScreen))
        screen = app.screen
        assert isinstance(screen, JoinsScreen)
        await until(pilot, lambda: screen.pools.row_count > 0)
        notes = notes_of(app)
        await pilot.press("c")  # on the pools table: a pool is selected, not a node
        await until(pilot, lambda: any("a pool is selected, not a node" in n for n in notes))
        assert isinstance(app.screen, JoinsScreen)
        await pilot.press("enter")
        await until(pilot, lambda: screen.nodes.has_focus)
        node = await pick(pilot, lambda: screen.nodes.selected, first)
        await walk(pilot, app, JoinsScreen, (node,))


async def test_the_timeline_and_ops_act_on_their_row_s_node(
        app: GpuTuiApp, cluster: EmulatedCluster,
        request_log: list[tuple[str, str]]) -> None:
    """A cordon confirmed from the upgrade lanes with ``y``: the server is asked to patch the
    lanes' node only (dry run, then the write), never the node list's cursor; its
    operation (``:ops``) and its timeline event then select that node for every action."""
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(pilot, app)
        await pilot.press("2")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        lanes = app.screen
        assert isinstance(lanes, UpgradesScreen)
        await until(pilot, lambda: lanes.lanes.row_count > 1)
        node = await pick(pilot, lambda: lanes.lanes.current_node, first)
        request_log.clear()
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        await until(pilot, lambda: app.snapshot.nodes[node].cordoned)
        patches = [path for method, path in request_log if method == "PATCH"]
        assert patches == [f"/api/v1/nodes/{node}"] * 2  # the dry run, then the write
        assert cluster.store.get("nodes", node, None)["spec"]["unschedulable"] is True
        assert "unschedulable" not in cluster.store.get("nodes", first, None)["spec"]

        await pilot.press("colon", *"ops", "enter")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen)
                    and app.screen.table.row_count == 1)
        await walk(pilot, app, OperationsScreen, (node,))

        await pilot.press("colon", *"timeline", "enter")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        timeline = app.screen
        assert isinstance(timeline, TimelineScreen)
        timeline.show_node(node)  # the node's events only, as `h` in the node list does
        await until(pilot, lambda: timeline.selected is not None
                    and timeline.selected.node == node)
        await walk(pilot, app, TimelineScreen, (node,))


async def test_a_view_with_no_node_selected_says_why_and_sends_nothing(
        app: GpuTuiApp, request_log: list[tuple[str, str]]) -> None:
    """A lane heading, an empty ``:ops``: every key and name answers why, no prompt opens,
    nothing reaches the server."""
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        notes = notes_of(app)
        await pilot.press("colon", *"ops", "enter")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen))
        await pilot.press("2")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        lanes = app.screen
        assert isinstance(lanes, UpgradesScreen)
        await until(pilot, lambda: lanes.lanes.row_count > 1)
        lanes.lanes.move_cursor(row=0)  # the first lane's heading
        await pilot.pause()
        assert lanes.lanes.current_node is None
        request_log.clear()
        for view, why in (("2", "the cursor is on a lane heading, not a node"),
                          (":ops", "no operation is selected")):
            await start(pilot, view)
            await pilot.pause()
            for action_id, trigger in TRIGGERS:
                notes.clear()
                await start(pilot, trigger)
                await until(pilot, lambda: any(why in n and "nothing was sent" in n
                                               for n in notes))
                assert not isinstance(app.screen, (ParamPrompt, ConfirmScreen)), action_id
        # the views' own keys with nothing to act on say so too (they were silent)
        for key, why in (("x", "no operation is selected"),
                         ("enter", "no operation is selected")):
            notes.clear()
            await pilot.press(key)
            await until(pilot, lambda want=why: any(want in n for n in notes))
        await pilot.press("2")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        assert lanes.lanes.current_node is None
        notes.clear()
        await pilot.press("enter")
        await until(pilot, lambda: any("a lane heading: move to a node" in n for n in notes))
        notes.clear()
        await pilot.press("space")  # marks are the node list's: said, not silently ignored
        await until(pilot, lambda: any("marks are the node list's (1)" in n for n in notes))
        assert not [r for r in request_log if r[0] != "GET"]
