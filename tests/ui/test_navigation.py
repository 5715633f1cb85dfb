"""Views, the ``:`` command line, jumps, help, palette and the header (Pilot, frozen data)."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.message import Message

from gputui.settings import Settings
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.commands import COMMANDS, key_label, palette_commands
from gputui.ui.contracts import SnapshotUpdated, SourceStatusChanged
from gputui.ui.screens.findings import FindingsScreen
from gputui.ui.screens.help import HelpScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.status_header import StatusHeader
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import palette_searched, until


async def test_snapshot_flows_as_messages_into_the_active_screen(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    seen: list[Message] = []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await settle(pilot)
        kinds = [type(m) for m in seen]
        assert SourceStatusChanged in kinds and SnapshotUpdated in kinds
        assert app.snapshot is app.source.snapshots[0]  # type: ignore[attr-defined]
        assert isinstance(app.screen, NodesScreen) and app.screen.snapshot is app.snapshot
    assert app.source.stopped  # type: ignore[attr-defined]  # on_unmount stopped the source


async def test_number_keys_and_escape_move_between_views(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key, mode in (("2", "upgrades"), ("3", "mig"), ("4", "findings"), ("1", "nodes")):
            await pilot.press(key)
            await settle(pilot)
            assert app.current_mode == mode
        await pilot.press("4")
        await settle(pilot)
        assert isinstance(app.screen, FindingsScreen)
        assert app.screen.snapshot is app.snapshot  # a resumed view gets the latest snapshot
        await pilot.press("escape")
        await settle(pilot)
        assert app.current_mode == "nodes"


async def test_command_line(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for typed, mode in (("findings", "findings"), ("up", "upgrades"), ("mig", "mig"),
                            ("nodes a100", "nodes")):
            await pilot.press("colon", *typed, "enter")
            await settle(pilot)
            assert app.current_mode == mode
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        assert screen.table.node_filter.text == "a100" and screen.table.row_count == 2
        await pilot.press("colon", *"help", "enter")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("colon", *"nonsense", "enter")
        await settle(pilot)
        assert app.current_mode == "nodes"
        await pilot.press("colon", "q", "enter")
        await settle(pilot)
    assert app.return_code == 0


async def test_finding_jumps_to_node_and_pane(frozen_app: FrozenApp) -> None:
    app = frozen_app("upgrade-failed")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FindingsScreen)
        findings = list(screen.table.findings.values())
        assert [f.severity.rank for f in findings] == sorted(
            (f.severity.rank for f in findings), reverse=True)
        first = screen.table.selected
        assert first is not None and first.pane == "pipeline" and first.node
        await pilot.press("enter")
        await settle(pilot)
        nodes = app.screen
        assert isinstance(nodes, NodesScreen)
        assert nodes.table.selected_node == first.node and nodes.selected == first.node
        assert nodes.query_one("#node-detail-tabs").active == "pipeline"  # type: ignore[attr-defined]
        upgrade = next(f for f in app.snapshot.findings if f.pane == "upgrade")
        app.commands.jump_to(upgrade.node, upgrade.pane)
        await settle(pilot)
        assert app.current_mode == "upgrades"


async def test_enter_focuses_detail_and_tabs_switch(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert not screen.table.has_focus
        await pilot.press("shift+tab")
        await pilot.press("d")
        await settle(pilot)
        assert screen.query_one("#node-detail-tabs").active == "node"  # type: ignore[attr-defined]
        await pilot.press("m")
        assert screen.query_one("#node-detail-tabs").active == "metrics"  # type: ignore[attr-defined]


async def test_help_lists_every_registry_command(frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy", settings=Settings(keymap={"findings_only": "F"}))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        rows = app.screen.rows
        titles = {title for _, _, title, _ in rows}
        for cmd in COMMANDS:
            assert cmd.title in titles, cmd.id
        keys = {title: keys for _, keys, title, _ in rows}
        assert keys["Faults only"] == "F"  # the remapped key, not the default
        assert any(section == "Pipeline pane" for section, *_ in rows)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, NodesScreen)
        await pilot.press("F")  # the remap works
        await settle(pilot)
        assert app.screen.table.node_filter.findings_only


async def test_palette_lists_every_command(frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await palette_searched(pilot, palette)
        options = palette.query_one("CommandList")
        prompts = [str(options.get_option_at_index(i).prompt)  # type: ignore[attr-defined]
                   for i in range(options.option_count)]  # type: ignore[attr-defined]
        for cmd in palette_commands():
            assert any(cmd.title in p for p in prompts), cmd.id
        await pilot.press(*"findings")
        await palette_searched(pilot, palette, "findings")
        await pilot.press("enter")
        await until(pilot, lambda: app.current_mode == "findings")


async def test_header_shows_stale_and_disconnected(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", source=source)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(StatusHeader)
        assert "● live" in header.render().plain
        source.set_status(SourceStatus(Connection.RECONNECTING, last_update=recording.now - 60,
                                       stale_since=recording.now - 60,
                                       message="connection refused"))
        await settle(pilot)
        assert app.status.connection is Connection.RECONNECTING
        line1 = header.render().plain.splitlines()[0]
        assert "stale since" in line1 and "retrying" in line1 and len(line1) <= 80
        source.set_status(SourceStatus(Connection.FAILED, message="401 Unauthorized"))
        await settle(pilot)
        assert "disconnected" in header.render().plain


async def test_open_pod_log_reads_in_a_worker(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", source=source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        node = app.snapshot.nodes[app.screen.selected or ""] if hasattr(app.screen, "selected") else None
        assert source.reads, "the pod log was read through the source"
        namespace, pod, _ = source.reads[0]
        assert namespace == "gpu-operator" and pod.startswith("nvidia-driver")
        assert type(app.screen).__name__ == "PodLogScreen"
        assert node is None or node


def test_key_labels_are_human() -> None:
    assert key_label("question_mark") == "?"
    assert key_label("q,ctrl+q") == "q ctrl+q"
