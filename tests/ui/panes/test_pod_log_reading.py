"""The pod log reads at 80x24 (issue 29 item 6): lines wrap by default and ``w`` toggles it,
``home``/``end`` go to the oldest and newest line, ``/`` finds text and ``n`` the next match.

Each of these failed before: Textual's ``Log`` never wrapped (17 presses of ``→`` to read a
kernel-headers error), and the screen had no search and no wrap key.
"""

from __future__ import annotations

from gputui.ui.commands import COMMANDS
from gputui.ui.contracts import PodLog, PodLogLoaded
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.widgets.log_view import LogView
from tests.ui.helpers import shown
from tests.ui.panes.data import NS, pipeline_snapshot
from tests.ui.panes.host import HostApp

POD = "nvidia-driver-daemonset-8x7kq"
TAIL = "linux-headers-5.15.0-1071-gke-has-no-installation-candidate"
LONG = ("E: Unable to locate package linux-headers-5.15.0-1071-gke; the driver container "
        "could not build the kernel module for this kernel: " + TAIL)
LINES = [f"line {i}: loading" for i in range(60)] + [LONG] + ["Stopping NVIDIA driver"]


def _screen_text(app: HostApp) -> str:
    """What the terminal shows, as text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def _open(pilot: object, app: HostApp) -> PodLogScreen:
    screen = app.screen
    assert isinstance(screen, PodLogScreen)
    screen.post_message(PodLogLoaded(PodLog(NS, POD, "nvidia-driver-ctr", tuple(LINES))))
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    return screen


async def test_a_long_line_wraps_at_80_columns_and_w_lets_it_run_off() -> None:
    screen = PodLogScreen(NS, POD, "nvidia-driver-ctr")
    app = HostApp(pipeline_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, app)
        view = screen.query_one("#pod-log-lines", LogView)
        assert view.wrap
        assert TAIL in _screen_text(app)  # the end of the long line, without scrolling
        assert "w: wrap off" in shown(screen, "#pod-log-status")
        await pilot.press("w")
        await pilot.pause()
        assert not view.wrap
        assert TAIL not in _screen_text(app)
        assert "w: wrap on" in shown(screen, "#pod-log-status")


async def test_home_and_end_go_to_the_oldest_and_newest_line() -> None:
    screen = PodLogScreen(NS, POD, "nvidia-driver-ctr")
    app = HostApp(pipeline_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, app)
        assert "Stopping NVIDIA driver" in _screen_text(app)  # opens at the newest
        await pilot.press("home")
        await pilot.pause()
        assert "line 0: loading" in _screen_text(app)
        assert "Stopping NVIDIA driver" not in _screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        assert "Stopping NVIDIA driver" in _screen_text(app)


async def test_slash_finds_text_and_n_shows_the_next_match() -> None:
    screen = PodLogScreen(NS, POD, "nvidia-driver-ctr")
    app = HostApp(pipeline_snapshot(), screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, app)
        await pilot.press("home", "slash")
        await pilot.press(*"LOADING", "enter")
        await pilot.pause()
        view = screen.query_one("#pod-log-lines", LogView)
        assert view.matches == tuple(range(60)) and view.match_index == 0
        assert "match 1 of 60 for 'LOADING'" in shown(screen, "#pod-log-status")
        await pilot.press("n")
        await pilot.pause()
        assert view.match_index == 1
        await pilot.press("slash", "escape")  # esc closes the field, not the log
        await pilot.pause()
        assert app.screen is screen


def test_the_log_keys_are_in_the_one_registry() -> None:
    """Help lists them: they come from the registry, not from the widget."""
    keys = {cmd.keys for cmd in COMMANDS if cmd.scope == "pod_log"}
    assert {"w", "slash", "n", "home", "end"} <= keys
