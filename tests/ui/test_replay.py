"""``gputui replay FILE`` in Pilot: the same TUI on a real recording, read-only, with a cursor.

The recording is written by the real :class:`TapeWriter` from fixed frames of the recorded
``xid-storm`` scenario (tests/fixtures/tapes.py): no XID for 20 s, then XID 79 on
:data:`XID_NODE`, three more XIDs, a cordon at +150 s. The app is built exactly as the CLI
builds it (:func:`gputui.session.open_session` then ``make_app``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gputui.domain.replay_cursor import PlayState, ReplayCursor
from gputui.session import NO_CONTEXTS, open_session
from gputui.settings import Settings
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.replay_controls import READ_ONLY
from gputui.ui.screens.help import HelpScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.status_header import StatusHeader
from gputui.ui.widgets.status_header_replay import utc_clock
from tests.fixtures.tapes import XID_NODE, write_xid_tape
from tests.ui.helpers import quiet_for, settle_for_snapshot, until

#: 2026-12-01 09:30 UTC: the recording's header date, fixed for stable screens
RECORDED_AT = 1796117400.0
#: the tape's start (the recorded scenario's "now" minus 180 s): 18:29:00 UTC
START_CLOCK = "18:29:00"

ReplayFactory = Callable[[], GpuTuiApp]


@pytest.fixture
def replay_app(tmp_path: Path) -> ReplayFactory:
    """``replay_app()`` -> the replay app on a fresh deterministic recording."""

    def build() -> GpuTuiApp:
        path = write_xid_tape(tmp_path / "xid-storm.tape")
        session = open_session(Settings(), "replay", path)
        assert session.replay is not None
        session.replay.tape.recorded_at = RECORDED_AT
        app = make_app(Settings(), session)
        app.min_snapshot_interval = 0.0
        return app
    return build



def _cursor(app: GpuTuiApp) -> ReplayCursor:
    """The replayed session's cursor."""
    cursor = app.session.cursor
    assert cursor is not None
    return cursor


def header(app: GpuTuiApp) -> list[str]:
    return app.screen.query_one(StatusHeader).render().plain.splitlines()


def xid_shown(app: GpuTuiApp) -> bool:
    view = app.snapshot.nodes.get(XID_NODE)
    return view is not None and any(f.code == "xid-error" for f in view.findings)


async def _ready(pilot: Any, app: GpuTuiApp) -> NodesScreen:
    await until(pilot, lambda: app.snapshot.generated_at == _cursor(app).start
                and "paused" in header(app)[0])
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    return screen


async def test_header_says_replay_of_the_context_at_the_time_recorded_and_paused(
        replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        line = header(app)[0]
        assert line.startswith(f"gputui ▸ replay of gputui-demo at {START_CLOCK} "
                               "(recorded 2026-12-01)")
        assert line.rstrip().endswith("❚❚ paused") and len(line) <= 80
        assert "live" not in line
        assert app.runner is None  # no writer exists


async def test_right_steps_to_the_xid_left_back_g_and_big_g_jump(
        replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        assert not xid_shown(app)
        await pilot.press("right")
        await until(pilot, lambda: xid_shown(app) and "at 18:29:20" in header(app)[0])
        await pilot.press("left")
        await until(pilot, lambda: not xid_shown(app) and f"at {START_CLOCK}" in header(app)[0])
        await pilot.press("G")
        await until(pilot, lambda: app.snapshot.generated_at == _cursor(app).end)
        assert app.snapshot.nodes[XID_NODE].cordoned and "at 18:32:00" in header(app)[0]
        assert header(app)[0].rstrip().endswith("❚❚ end")
        await pilot.press("g")
        await until(pilot, lambda: app.snapshot.generated_at == _cursor(app).start)
        assert not app.snapshot.nodes[XID_NODE].cordoned


async def test_t_jumps_to_a_typed_time_and_a_bad_one_is_one_line(
        replay_app: ReplayFactory) -> None:
    app = replay_app()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("t", *"18:31:31", "enter")  # the cordon came at 18:31:30.28
        await until(pilot, lambda: "at 18:31:31" in header(app)[0])
        assert _cursor(app).position == int(_cursor(app).start) + 151
        await until(pilot, lambda: app.snapshot.nodes[XID_NODE].cordoned)
        await pilot.press("t", *"+45s", "enter")
        await until(pilot, lambda: "at 18:29:45" in header(app)[0])
        await pilot.press("colon", *"at 23:59", "enter")
        await until(pilot, lambda: len(notes) == 1)
        assert notes[0].startswith(":at: ") and "\n" not in notes[0]
        assert _cursor(app).position == _cursor(app).start + 45  # unchanged by the bad time


async def test_space_plays_and_pauses(replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        await pilot.press("space")
        await until(pilot, lambda: "▶ playing" in header(app)[0]
                    and app.snapshot.generated_at > _cursor(app).start)
        await pilot.press("space")
        await until(pilot, lambda: "❚❚ paused" in header(app)[0])
        stopped = _cursor(app).position
        await quiet_for(pilot, 0.3)  # playing, the cursor would have moved within it
        assert _cursor(app).position == stopped
        screen = app.screen
        assert isinstance(screen, NodesScreen) and not screen.table.marks  # space: no mark


async def test_action_keys_say_read_only_and_nothing_can_write(
        replay_app: ReplayFactory) -> None:
    app = replay_app()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        for key in ("c", "u", "r"):
            await pilot.press(key)
        await until(pilot, lambda: len(notes) == 3)
        assert notes == [f"{title} is not available: {READ_ONLY}"
                         for title in ("Cordon", "Uncordon", "Drain")]
        assert isinstance(app.screen, NodesScreen) and app.screen is screen
        assert app.check_action("act", ("cordon",)) is None  # greyed in the footer (an app key)
        await pilot.press("colon", *"ctx", "enter")
        await pilot.press("colon", *"ctx prod", "enter")
        await until(pilot, lambda: len(notes) == 5)
        assert notes[3:] == [f":ctx: {NO_CONTEXTS}"] * 2
        assert app.runner is None and app.contexts.opener is None


async def test_typing_in_the_filter_keeps_space_and_arrows(replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        await pilot.press("slash", *"a b", "left", "right", "g")
        field = app.focused
        assert field is not None and getattr(field, "value", None) == "a bg"
        assert _cursor(app).position == _cursor(app).start and _cursor(app).version == 0


async def test_help_lists_the_replay_keys(replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await _ready(pilot, app)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        rows = {(keys, title) for scope, keys, title, _ in screen.rows
                if scope == "Replay (gputui replay)"}
        assert rows == {("space", "Play"), ("left", "Prev change"), ("right", "Next change"),
                        ("g", "Start"), ("G", "End"), ("t", "Go to time"), ("]", "Faster"),
                        ("[", "Slower")}


async def _settle_on_xid(pilot: Any) -> None:
    app = pilot.app
    await until(pilot, lambda: app.snapshot.generated_at == _cursor(app).start)
    await pilot.press("right")
    await until(pilot, lambda: xid_shown(app) and "at 18:29:20" in header(app)[0])
    await settle_for_snapshot(pilot)


def test_replay_at_the_xid_80x24(snap_compare: Any, replay_app: ReplayFactory) -> None:
    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=_settle_on_xid)


async def test_timeline_shows_what_was_recorded_up_to_the_cursor(
        replay_app: ReplayFactory) -> None:
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        assert list(app.timelines.timeline.query()) == []  # nothing derived, no audit log read
        await pilot.press("right")
        await until(pilot, lambda: [e.kind for e in app.timelines.timeline.query()] == ["xid"])
        assert app.timelines.timeline.query()[0].node == XID_NODE
        await pilot.press("G")
        await until(pilot, lambda: len(app.timelines.timeline.query()) == 6)  # the damaged one skipped
        kinds = sorted(e.kind for e in app.timelines.timeline.query())
        assert kinds == ["action", "cordon", "xid", "xid", "xid", "xid"]
        assert [e.who for e in app.timelines.timeline.query() if e.kind == "action"] == ["alice"]
        await pilot.press("colon", *"timeline", "enter")
        await until(pilot, lambda: app.current_mode == "timeline")
        await pilot.press("g")
        await until(pilot, lambda: list(app.timelines.timeline.query()) == [])


async def test_a_live_recording_shows_the_xid_when_the_live_screen_did(
        live_tape: tuple[Path, dict[str, object]]) -> None:
    path, seen = live_tape
    session = open_session(Settings(), "replay", path)
    cursor = session.cursor
    assert cursor is not None
    app = make_app(Settings(), session)
    app.min_snapshot_interval = 0.0

    def xid79() -> bool:
        return any(f.code == "xid-error" and "XID 79" in f.message
                   for f in app.snapshot.findings)

    async with app.run_test(size=(80, 24)) as pilot:
        # it opens at the first complete moment (gputui.session.open_session), not the start
        await until(pilot, lambda: app.snapshot.generated_at == cursor.position)
        for _ in range(100):  # right, change by change, until the XID is on screen
            if xid79():
                break
            await pilot.press("right")
            await until(pilot, lambda: app.snapshot.generated_at == cursor.position)
        assert xid79()
        assert app.snapshot.generated_at == seen["xid79_at"]
        await until(pilot, lambda: f"at {utc_clock(float(seen['xid79_at']))}"  # type: ignore[arg-type]
                    in header(app)[0])


async def test_metrics_are_those_recorded_or_say_not_recorded(replay_app: ReplayFactory) -> None:
    from rich.console import Console

    from gputui.sources.tape.source import METRICS_NOT_RECORDED
    from gputui.ui.render.metrics import render_metrics

    def pane_text() -> str:
        node = app.snapshot.nodes.get(screen.table.selected_node or "")
        console = Console(width=100, record=True)
        console.print(render_metrics(node, None, app.metrics, app.clock()))
        return console.export_text()

    app = replay_app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _ready(pilot, app)
        await pilot.press("G", "m")
        screen.show_node(XID_NODE)  # the only node on screen while recording
        await until(pilot, lambda: app.metrics.node is not None
                    and app.metrics.node.node == XID_NODE)
        assert "recorded metrics (exporter API server pod proxy)" in pane_text()
        screen.show_node("gke-prod-h100-pool-7f3a-hdmv")
        await until(pilot, lambda: app.metrics.origin.error == METRICS_NOT_RECORDED)
        assert app.metrics.node is None and "not recorded at this time" in pane_text()
        assert "last read failed" not in pane_text()


@pytest.mark.parametrize(("play", "speed", "message", "shown", "role"), [
    (PlayState.SEEKING, 1.0, "", "⟳ seeking…", "progress"),
    (PlayState.PAUSED, 4.0, "", "❚❚ paused", "progress"),
    (PlayState.PLAYING, 1.0, "", "▶ playing", "ok"),
    (PlayState.PLAYING, 4.0, "", "▶ playing 4×", "ok"),
    (PlayState.PLAYING, 0.5, "", "▶ playing 0.5×", "ok"),
    (PlayState.END, 1.0, "", "❚❚ end", "progress"),
    (None, 1.0, "", "❚❚ paused", "progress"),
    (PlayState.PAUSED, 1.0, "cannot show this time: boom", "✖ cannot show this time: boom",
     "crit"),
])
def test_the_header_names_the_cursor_state(play: PlayState | None, speed: float, message: str,
                                           shown: str, role: str) -> None:
    """A far jump says it is seeking (the panes still show the last time) rather than
    leaving the operator to wonder whether the key was taken."""
    from gputui.sources.base import Connection, SourceStatus
    from gputui.ui.widgets.status_header_replay import play_part

    status = SourceStatus(Connection.REPLAY, message=message, play=play, play_speed=speed)
    assert play_part(status) == (shown, role)
