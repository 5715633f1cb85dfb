"""The real binary in a real terminal when the terminal misbehaves (tmux, this worktree's code).

Keys typed in one burst, the first paint at 80x24 under CPU load (repeated), a resize to
60x20 and back, TERM=dumb with NO_COLOR, a 16-colour terminal, and a closed terminal
(SIGHUP, and the pane itself killed). Content only, never timing: polls wait for text.
The command is ``python -m gputui`` from this checkout, not the ``gputui`` on PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.ui.helpers import REPO, Tmux, poll_screen, tmux  # noqa: F401 - tmux: the fixture

pytestmark = pytest.mark.tmux
ROW = re.compile(r"gke-prod-[a-z0-9]+-pool-[0-9a-f]{4}-[a-z0-9]{4}\s+(Ready|NotReady)")


@pytest.fixture
def cpu_load() -> Iterator[None]:
    """Two busy processes: the machine is loaded while gputui starts and paints."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(2)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def launch(tmux: Tmux, size: tuple[int, int] = (80, 24), env: str = "TERM=xterm-256color",
           extra: str = "") -> None:
    command = (f"cd {REPO} && env {env} PYTHONPATH={REPO} {sys.executable} -m gputui --demo "
               f"--speed 20 {extra}; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), command)
    assert started.returncode == 0, started.stderr


def table_rows(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if "gke-" in line and "Ready" in line]


def rows_complete(screen: str, least: int = 5) -> bool:
    rows = table_rows(screen)
    return len(rows) >= least and all(ROW.search(row) for row in rows)


def filtered(screen: str) -> bool:
    """The filter is applied: named in the view line, and every row shown passes it."""
    rows = table_rows(screen)
    return "filter: a100" in screen and bool(rows) and all("a100" in row for row in rows)


def gputui_pid(tmux: Tmux) -> int:
    shell = int(tmux.run("display", "-p", "#{pane_pid}").stdout.strip())
    children = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True, text=True,
                              check=False).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("repeat", range(3))
def test_first_paint_at_80x24_under_load(tmux: Tmux, cpu_load: None, repeat: int) -> None:
    launch(tmux)
    assert poll_screen(lambda: len(table_rows(tmux.screen())) >= 5), tmux.screen()
    screen = tmux.screen()
    assert rows_complete(screen), screen


def test_burst_filter_and_resize(tmux: Tmux, cpu_load: None) -> None:
    launch(tmux)
    assert poll_screen(lambda: rows_complete(tmux.screen())), tmux.screen()
    tmux.run("send-keys", ":upgrades", "Enter")  # one burst, as SSH delivers it
    assert poll_screen(lambda: "slots" in tmux.screen() and "NAME" not in tmux.screen()), \
        tmux.screen()
    tmux.run("send-keys", ":nodes", "Enter", "/a100", "Enter")
    assert poll_screen(lambda: filtered(tmux.screen())), tmux.screen()
    tmux.run("resize-window", "-x", "60", "-y", "20")
    assert poll_screen(lambda: "gputui" in tmux.screen().splitlines()[0]
                 and max(map(len, tmux.screen().splitlines())) <= 60), tmux.screen()
    tmux.run("resize-window", "-x", "80", "-y", "24")
    assert poll_screen(lambda: rows_complete(tmux.screen(), least=3)
                 and "filter: a100" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()


def test_sighup_exits_cleanly_and_restores_the_terminal(tmux: Tmux) -> None:
    launch(tmux)
    assert poll_screen(lambda: rows_complete(tmux.screen())), tmux.screen()
    pid = gputui_pid(tmux)
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                              check=False).stdout.split()
    assert children == []  # the demo cluster runs in threads, never in child processes
    os.kill(pid, 1)  # SIGHUP, as when the SSH session closes
    assert poll_screen(lambda: "gputui exited with 129" in tmux.screen(), timeout=60), tmux.screen()
    assert not alive(pid)
    assert tmux.run("display", "-p", "#{alternate_on}").stdout.strip() == "0"
    assert "Traceback" not in tmux.screen()


def test_closed_terminal_ends_the_process(tmux: Tmux) -> None:
    launch(tmux)
    assert poll_screen(lambda: rows_complete(tmux.screen())), tmux.screen()
    pid = gputui_pid(tmux)
    tmux.run("kill-server")  # the terminal is gone: the pty closes, SIGHUP follows
    assert poll_screen(lambda: not alive(pid), timeout=30), f"gputui {pid} still running"


@pytest.mark.parametrize("env", ["TERM=dumb NO_COLOR=1", "TERM=xterm-16color",
                                 "TERM=xterm-256color TEXTUAL_COLOR_SYSTEM=standard"])
def test_poor_terminals_show_the_nodes(tmux: Tmux, env: str) -> None:
    launch(tmux, env=env)
    assert poll_screen(lambda: rows_complete(tmux.screen())), tmux.screen()
    tmux.run("send-keys", "?")
    assert poll_screen(lambda: "WHAT IT DOES" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "Escape")  # alone: ESC then q in one read is alt+q to a terminal
    assert poll_screen(lambda: "WHAT IT DOES" not in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
