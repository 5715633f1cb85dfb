"""``gputui --demo --record FILE`` in a real terminal: the TUI records while it runs, the file
is readable while it grows, and quitting closes it whole.

Asserts content, never timing: polls are generous and only wait for something to appear.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gputui.sources.tape.reader import TapeReader
from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen, xid_recorded
from tests.ui.helpers import tmux  # noqa: F401 - the fixture

pytestmark = pytest.mark.tmux


def test_demo_records_while_it_runs_and_closes_on_quit(tmux: Tmux, tmp_path: Path) -> None:
    path = tmp_path / "session.gputui-rec"
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} HOME={tmp_path} "
               f"{gputui_command()} --demo --scenario xid-storm --speed 10 --record {path}; "
               "echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "120", "-y", "40", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "gke-" in tmux.screen()), tmux.screen()
    assert poll_screen(lambda: xid_recorded(path), timeout=120), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
    whole = gzip.decompress(path.read_bytes())  # ended properly: a complete gzip stream
    assert whole.startswith(b'{"gputui_tape":1')
    reader = TapeReader.open(path)
    assert reader.context == "gputui-demo" and len(reader.objects_at(reader.end).nodes) == 4
    assert any(x.xid == 79 for xs in reader.objects_at(reader.end).xids.values() for x in xs)
