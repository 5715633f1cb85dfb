"""The real binary at 80x24 in tmux: a pod log line longer than the pane wraps, ``w`` lets
it run off again (issue 29 item 6).

The A100 node of ``driver-crashloop`` crash-loops in k8s-driver-manager from 20 s; each of
its log lines starts with a timestamp, so "... Could not unload NVIDIA driver kernel
modules, driver is in use" is 84 columns: before, the pod log cut it at the pane's edge and
"driver is in use" was never on screen without scrolling sideways.
"""

from __future__ import annotations

import pytest

from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen
from tests.ui.helpers import tmux  # noqa: F401 - the fixture

pytestmark = pytest.mark.tmux


def _log_box(screen: str) -> str:
    """The rows inside the pod log's frame."""
    return "\n".join(line for line in screen.splitlines() if line.count("│") >= 2)


def test_a_long_log_line_wraps_at_80x24_and_w_toggles(tmux: Tmux) -> None:
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {gputui_command()} "
               "--demo --scenario driver-crashloop --speed 20; echo \"gputui exited with $?\"; "
               "sleep 120")
    assert tmux.run("new-session", "-d", "-x", "80", "-y", "24", command).returncode == 0
    # the A100 node's driver fails first (from 20 s): it sorts first and is selected
    assert poll_screen(lambda: "driver-pod-failing" in tmux.screen()
                 and "Init:CrashLoopBackOff in k8s-driver-manager" in tmux.screen(),
                 timeout=120), tmux.screen()
    tmux.run("send-keys", "l")
    assert poll_screen(lambda: "newest last" in tmux.screen()
                 and "driver is in use" in _log_box(tmux.screen()), timeout=60), tmux.screen()
    assert "w: wrap off" in tmux.screen()
    tmux.run("send-keys", "w")
    assert poll_screen(lambda: "w: wrap on" in tmux.screen()), tmux.screen()
    assert "driver is in use" not in _log_box(tmux.screen()), tmux.screen()
    tmux.run("send-keys", "Escape")
    assert poll_screen(lambda: "newest last" not in tmux.screen(), timeout=30), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
