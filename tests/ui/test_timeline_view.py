"""``:timeline``: events derived from pushed snapshots of the recorded scenarios, the filter,
the node list's ``h`` key, actions from the audit log with who, the sink a recording gets,
a replay's given events, and an 80x24 snapshot (frozen clock, recorded data)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from gputui.domain.model import Severity
from gputui.domain.summary import iso_utc
from gputui.domain.timeline import TimelineEvent, make_event
from gputui.settings import Settings
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.timeline import TimelineScreen
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import FrozenApp, modified, settle
from tests.ui.helpers import until


def _settings(tmp_path: Path) -> Settings:
    """The audit log is the test's own (never the machine's)."""
    return Settings(audit_log=str(tmp_path / "audit.jsonl"))


def _rows(screen: TimelineScreen) -> list[list[str]]:
    table = screen.table
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def _open(pilot: Any) -> TimelineScreen:
    await pilot.press("colon", *"timeline", "enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TimelineScreen)
    return screen


async def test_two_snapshots_give_events_newest_first(frozen_app: FrozenApp,
                                                      tmp_path: Path) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    names = sorted(recording.objects.nodes)
    app = frozen_app("driver-crashloop", settings=_settings(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await _open(pilot)
        assert screen.table.has_class("hidden")  # nothing yet: it says what it watches
        empty = str(screen.query_one("#timeline-empty").render())
        assert empty.startswith("Watching gputui-demo since ") and "XIDs" in empty
        source = app.source
        assert isinstance(source, ReplaySource)
        source.push(modified(recording, cordon=(names[0],)))
        await settle(pilot)
        source.push(modified(recording, cordon=(names[0],), remove=(names[1],)))
        await settle(pilot)
        rows = _rows(screen)
        assert [r[2] for r in rows] == ["left the cluster", "cordoned"]
        assert rows[0][1].endswith(names[1][-8:]) and rows[1][1].endswith(names[0][-8:])
        assert rows[0][0] == "18:30:23"  # the recording's clock, UTC
        assert [e.text for e in app.timelines.timeline.query()] == ["left the cluster", "cordoned"]
        assert "2 events since " in str(screen.query_one("#timeline-view-line").render())


async def test_filter_by_node_and_the_node_list_key(frozen_app: FrozenApp,
                                                    tmp_path: Path) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    names = sorted(recording.objects.nodes)
    app = frozen_app("driver-crashloop", settings=_settings(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        source = app.source
        assert isinstance(source, ReplaySource)
        source.push(modified(recording, cordon=(names[0], names[2])))
        await settle(pilot)
        screen = await _open(pilot)
        assert len(_rows(screen)) == 2
        await pilot.press("slash", *names[2][-4:])
        await settle(pilot)
        assert [e.node for e in screen._shown.values()] == [names[2]]
        await pilot.press("enter", "escape")  # esc clears the filter, stays in the view
        await settle(pilot)
        assert len(_rows(screen)) == 2 and app.current_mode == "timeline"
        # from the node list: h on the selected node opens its timeline
        await pilot.press("1")
        await settle(pilot)
        nodes = app.screen
        assert isinstance(nodes, NodesScreen)
        nodes.show_node(names[0])
        await settle(pilot)
        await pilot.press("h")
        await settle(pilot)
        assert app.current_mode == "timeline" and app.screen is screen
        assert screen.filter.node == names[0]
        assert [e.node for e in screen._shown.values()] == [names[0]]
        assert f"node {names[0]}" in str(screen.query_one("#timeline-view-line").render())
        await pilot.press("escape")
        await settle(pilot)
        assert screen.filter.node is None and len(_rows(screen)) == 2


async def test_actions_of_this_cluster_come_from_the_audit_log_with_who(
        frozen_app: FrozenApp, tmp_path: Path) -> None:
    """Only the actions whose intent line names this cluster (server URL and kube-system
    UID): not another cluster's behind the same context name and URL (b2: the demo's
    clusters are all ``gputui-demo``), nor a line without a cluster (d4), nor one older
    than the hour (c3). Before issue 29 (item 3) b2 and d4 were shown."""
    recording = load_recording("driver-crashloop", SCENARIOS)
    recording = replace(recording, objects=replace(recording.objects, cluster_uid="uid-demo"))
    node = min(recording.objects.nodes)
    server = recording.objects.server
    audit = tmp_path / "audit.jsonl"
    import time as clock

    wall = clock.time()
    lines = [
        {"id": "a1", "time": iso_utc(wall - 120), "phase": "intent", "context": "renamed",
         "cluster": {"server": server, "uid": "uid-demo"}, "user": "alice",
         "action": "cordon", "targets": [node]},
        {"id": "a1", "time": iso_utc(wall - 118), "phase": "outcome",
         "result": f"ok: Cordon {node}: done"},
        {"id": "b2", "time": iso_utc(wall - 60), "phase": "intent", "context": "gputui-demo",
         "cluster": {"server": server, "uid": "uid-earlier-run"}, "user": "bob",
         "action": "drain", "targets": [node]},
        {"id": "c3", "time": iso_utc(wall - 7200), "phase": "intent",
         "context": "gputui-demo", "cluster": {"server": server, "uid": "uid-demo"},
         "user": "carol", "action": "drain", "targets": [node]},
        {"id": "d4", "time": iso_utc(wall - 50), "phase": "intent", "context": "gputui-demo",
         "user": "dan", "action": "drain", "targets": [node]},
    ]
    audit.write_text("".join(json.dumps(line) + "\n" for line in lines))
    app = frozen_app("driver-crashloop", settings=Settings(audit_log=str(audit)),
                     source=ReplaySource.from_recording(recording))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await _open(pilot)
        await until(pilot, lambda: len(app.timelines.timeline) == 1)
        await settle(pilot)
        event, = app.timelines.timeline.query()
        assert (event.kind, event.node, event.who) == ("action", node, "alice")
        # placed on the app's (recorded) clock, 118 s before "now"
        assert abs(event.at - (recording.now - 118)) < 5
        assert _rows(screen)[0][3] == "alice"


async def test_sink_gets_each_batch_and_given_events_replace_deriving(
        frozen_app: FrozenApp, tmp_path: Path) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    names = sorted(recording.objects.nodes)
    batches: list[list[dict[str, Any]]] = []
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", settings=_settings(tmp_path), source=source)
    app.timelines.sink = lambda events: batches.append([e.to_json() for e in events])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        source.push(modified(recording, cordon=(names[0],)))
        await settle(pilot)
        assert [[e["text"] for e in batch] for batch in batches] == [["cordoned"]]
        given = [make_event(recording.now - 30, "xid", names[1], "XID 79 on GPU 3: gone",
                            Severity.CRITICAL),
                 TimelineEvent.from_json(batches[0][0])]
        app.timelines.given(given)
        source.push(modified(recording, remove=(names[2],)))
        await settle(pilot)
        screen = await _open(pilot)
        assert [r[2] for r in _rows(screen)] == ["cordoned", "✖ XID 79 on GPU 3: gone"]
        assert len(batches) == 1  # nothing derived, nothing sent on


def test_timeline_80x24(snap_compare: Any, frozen_app: FrozenApp, tmp_path: Path) -> None:
    recording = load_recording("xid-storm", SCENARIOS)
    names = sorted(recording.objects.nodes)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("xid-storm", settings=_settings(tmp_path), source=source)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        source.push(modified(recording, cordon=(names[0],), remove=(names[-1],)))
        await settle(pilot)
        app.timelines.given([*app.timelines.timeline.events(), make_event(
            recording.now - 3600 * 25, "action", names[0], f"drain on {names[0]}: ok: "
            "drained 3 pods", who="alice")])
        await _open(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_summary_has_the_last_hour_of_the_affected_nodes(frozen_app: FrozenApp,
                                                               tmp_path: Path) -> None:
    """``:summary`` takes the app's timeline: a change on a node with a critical finding is
    listed, one on a healthy node is not."""
    from gputui.ui.screens.summary import SummaryScreen

    recording = load_recording("driver-crashloop", SCENARIOS)
    snapshot = recording.snapshot()
    sick = sorted(n for n, v in snapshot.nodes.items() if v.worst is Severity.CRITICAL)
    well = sorted(n for n, v in snapshot.nodes.items() if v.worst in (None, Severity.INFO))
    assert sick and well
    app = frozen_app("driver-crashloop", settings=_settings(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        source = app.source
        assert isinstance(source, ReplaySource)
        source.push(modified(recording, cordon=(sick[0], well[0])))
        await settle(pilot)
        await pilot.press("colon", *"summary", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SummaryScreen)
        part = screen.markdown[screen.markdown.index("## Timeline (last hour)"):]
        assert f"{iso_utc(recording.now)} {sick[0]}: cordoned" in part
        assert well[0] not in part


async def test_another_cluster_starts_a_new_timeline(frozen_app: FrozenApp,
                                                     tmp_path: Path) -> None:
    """After a context switch the new cluster's first snapshot is its baseline: the old
    cluster's events go, and nothing is said of the difference between two clusters."""
    from dataclasses import replace

    recording = load_recording("driver-crashloop", SCENARIOS)
    names = sorted(recording.objects.nodes)
    app = frozen_app("driver-crashloop", settings=_settings(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.timelines.snapshot(modified(recording, cordon=(names[0],)))
        assert [e.text for e in app.timelines.timeline.events()] == ["cordoned"]
        other = replace(modified(recording, remove=(names[0],)), context="other",
                        generated_at=recording.now + 60)
        app.timelines.snapshot(other)
        assert app.timelines.timeline.events() == () and app.timelines.timeline.since == recording.now + 60
        screen = await _open(pilot)
        # (the view names the context of the snapshot the app applied: not pushed here)
        assert " since 18:31:23 UTC: findings raised" in str(
            screen.query_one("#timeline-empty").render())
