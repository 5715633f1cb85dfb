"""``gputui replay FILE``, the real binary in tmux at 80x24: the header says it is a replay,
right steps to the XID, an action key is refused as read-only, q leaves with 0.

The recording is written by the real :class:`TapeWriter` (tests/fixtures/tapes.py: the
recorded xid-storm cluster, XID 79 on :data:`XID_NODE` 20 s in). Asserts content only;
polls wait for text to appear.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.tapes import XID_NODE, write_xid_tape
from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen

pytestmark = pytest.mark.tmux


def _row(screen: str, name: str) -> str:
    return next((line for line in screen.splitlines() if name in line and "Ready" in line), "")


def test_replay_steps_to_the_xid_in_a_real_terminal(tmp_path: Path) -> None:
    tmux = Tmux()
    try:
        _run(tmux, write_xid_tape(tmp_path / "xid-storm.tape"))
    finally:
        tmux.run("kill-server")


def _run(tmux: Tmux, tape: Path) -> None:
    command = (f"cd {REPO} && env TERM=xterm-256color TZ=UTC PYTHONPATH={REPO} "
               f"{gputui_command()} replay {tape}; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "80", "-y", "24", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "replay of gputui-demo at 18:29:00 (recorded " in tmux.screen()
                 and "paused" in tmux.screen() and XID_NODE in tmux.screen()), tmux.screen()
    assert "live" not in tmux.screen().splitlines()[0]
    assert "xid-error" not in _row(tmux.screen(), XID_NODE)
    tmux.run("send-keys", "Right")
    assert poll_screen(lambda: "at 18:29:20" in tmux.screen()
                 and "xid-error" in _row(tmux.screen(), XID_NODE)), tmux.screen()
    tmux.run("send-keys", "c")
    assert poll_screen(lambda: "read-only" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()


def _first_line(screen: str) -> str:
    return (screen.splitlines() or [""])[0]


def _action_recorded(path: Path) -> bool:
    """The growing recording's timeline holds the cordon's action (with who) and the
    cordon the next snapshot showed."""
    from gputui.sources.tape.format import TapeError
    from gputui.sources.tape.reader import TapeReader

    try:
        reader = TapeReader.open(path)
    except TapeError:
        return False
    kinds = {event.get("kind") for event in reader.timeline_until(reader.end)}
    return {"action", "cordon"} <= kinds


def test_record_in_the_demo_then_replay_it(tmp_path: Path) -> None:
    """The whole loop with the real binary twice: ``gputui --demo --scenario xid-storm
    --record FILE`` until the recording holds an XID, quit, then ``gputui replay FILE``:
    at the start (``g``) the findings view names no XID, at the end (``G``) XID 79, and the
    timeline shows the cordon taken while recording, with who took it."""
    from tests.ui.helpers import xid_recorded

    path = tmp_path / "session.gputui-rec"
    recording, replaying = Tmux(), Tmux()
    try:
        command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} HOME={tmp_path} "
                   f"{gputui_command()} --demo --scenario xid-storm --speed 10 --record "
                   f"{path}; echo \"gputui exited with $?\"; sleep 120")
        assert recording.run("new-session", "-d", "-x", "120", "-y", "40",
                             command).returncode == 0
        assert poll_screen(lambda: xid_recorded(path), timeout=120), recording.screen()
        # the recording light; polled, as a capture taken mid-frame on a loaded machine
        # once read the header line blank
        assert poll_screen(lambda: "● rec" in _first_line(recording.screen())), \
            recording.screen()
        # an action taken while recording: the replay's timeline must show it, with who
        recording.run("send-keys", "c")
        assert poll_screen(lambda: "Cordon" in recording.screen()), recording.screen()
        recording.run("send-keys", "y")
        assert poll_screen(lambda: _action_recorded(path), timeout=60), recording.screen()
        recording.run("send-keys", "q")
        assert poll_screen(lambda: "gputui exited with 0" in recording.screen(), timeout=60)
        command = (f"cd {REPO} && env TERM=xterm-256color TZ=UTC PYTHONPATH={REPO} "
                   f"{gputui_command()} replay {path}; echo \"gputui exited with $?\"; "
                   "sleep 120")
        assert replaying.run("new-session", "-d", "-x", "80", "-y", "24",
                             command).returncode == 0
        assert poll_screen(lambda: "replay of gputui-demo at " in replaying.screen()
                     and "gke-" in replaying.screen()), replaying.screen()
        replaying.run("send-keys", "4")  # the findings view lists every finding
        assert poll_screen(lambda: "findings" in replaying.screen()
                     and "XID" not in replaying.screen()), replaying.screen()
        replaying.run("send-keys", "G")
        assert poll_screen(lambda: "❚❚ end" in replaying.screen()
                     and "XID 79" in replaying.screen()), replaying.screen()
        assert "(recorded 20" in replaying.screen().splitlines()[0]
        replaying.run("send-keys", ":")
        replaying.run("send-keys", "-l", "timeline")
        replaying.run("send-keys", "Enter")
        assert poll_screen(lambda: "cordon: ok" in replaying.screen()
                     and "operator" in replaying.screen()), replaying.screen()
        replaying.run("send-keys", "4")
        replaying.run("send-keys", "g")
        assert poll_screen(lambda: "❚❚ end" not in replaying.screen()
                     and "XID" not in replaying.screen()), replaying.screen()
        replaying.run("send-keys", "q")
        assert poll_screen(lambda: "gputui exited with 0" in replaying.screen(), timeout=60)
    finally:
        recording.run("kill-server")
        replaying.run("kill-server")
