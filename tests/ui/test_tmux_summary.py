"""The handoff summary in a real terminal: tmux with ``set-clipboard on`` takes gputui's
OSC 52 into its paste buffer.

``gputui sim`` serves the driver-crashloop scenario (a driver crash-loop on the H100 pool:
critical and warning findings); the TUI cordons a node through the confirmation dialog,
then ``:summary`` and ``y``. ``tmux show-buffer`` must hold the Markdown, naming every
warning and critical finding the findings view showed, and the cordon with its result.
Asserts content only; polls wait for text to appear.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen

pytestmark = pytest.mark.tmux


@pytest.fixture
def crashloop_sim(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """``gputui sim --scenario driver-crashloop``; yields the kubeconfig it wrote, and the
    process (the test holds the cluster still with SIGSTOP)."""
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", "driver-crashloop", "--speed",
         "20", "--kubeconfig-out", str(config)], cwd=REPO, stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT)
    try:
        assert poll_screen(config.exists, timeout=60), "gputui sim did not start"
        yield config, process
    finally:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(timeout=30)


#: a findings row: severity symbol and word, then the code
_ROW = re.compile(r"[✖▲] (?:crit|warn)\w*\s+([a-z0-9-]+)\s")


def _serious_codes(screen: str) -> set[str]:
    return set(_ROW.findall(screen))


def _crash_loop_shown(screen: str, seen: list[set[str]]) -> bool:
    """The findings view shows the crash-loop's critical and warning rows, read from one
    capture (the scenario moves: its H100 nodes reboot after the kernel update, and their
    findings are info until the driver's crash-loop is past its grace)."""
    codes = _serious_codes(screen)
    if "go to node and pane" in screen and {"driver-pod-failing", "gpus-unavailable"} <= codes:
        seen.append(codes)
        return True
    return False


def test_summary_then_y_lands_in_the_tmux_paste_buffer(
        crashloop_sim: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path) -> None:
    tmux = Tmux()
    try:
        _run(tmux, *crashloop_sim, tmp_path / "audit.jsonl")
    finally:
        tmux.run("kill-server")


def _hold_still_with_the_crash_loop_shown(tmux: Tmux, sim: subprocess.Popen[bytes]) -> set[str]:
    """Stop the cluster (SIGSTOP on ``gputui sim``) at a moment the findings view shows the
    crash-loop's rows; their codes. Why: each crash of a driver has k8s-driver-manager pause
    the node's operands and the driver come up again, so findings come and go every few
    emulated seconds (seen in CI between the findings view and the summary). Held still, the
    summary is made from the snapshot the view showed."""
    seen: list[set[str]] = []
    for _ in range(10):
        sim.send_signal(signal.SIGCONT)
        assert poll_screen(lambda: _crash_loop_shown(tmux.screen(), seen), timeout=60), \
            tmux.screen()
        sim.send_signal(signal.SIGSTOP)
        time.sleep(1.0)  # window: a snapshot already on its way lands now, or never
        if _crash_loop_shown(tmux.screen(), seen):
            return seen[-1]
    raise AssertionError(f"the crash-loop's rows never held still: {tmux.screen()}")


def _run(tmux: Tmux, sim_config: Path, sim: subprocess.Popen[bytes], audit: Path) -> None:
    command = (f"env TERM=xterm-256color PYTHONPATH={REPO} {gputui_command()} --kubeconfig "
               f"{sim_config} --audit-log {audit}; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "160", "-y", "48", command)
    assert started.returncode == 0, started.stderr
    assert tmux.run("set-option", "-s", "set-clipboard", "on").returncode == 0
    assert poll_screen(lambda: "gke-" in tmux.screen() and "● live" in tmux.screen()), tmux.screen()
    # one action first, through the confirmation dialog, on the node the crash-loop spares
    # (k8s-driver-manager cordons the others itself)
    tmux.run("send-keys", "/", "stnm", "Enter")
    assert poll_screen(lambda: "1/5 nodes" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "c")
    assert poll_screen(lambda: "Dry run: passed" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: audit.exists() and '"phase":"outcome"' in audit.read_text(),
                 timeout=30), tmux.screen()
    intent, outcome = (json.loads(line) for line in audit.read_text().splitlines())
    (node,) = intent["targets"]
    # the findings the operator sees: the crash-loop's critical and warning rows
    tmux.run("send-keys", "4")
    codes = _hold_still_with_the_crash_loop_shown(tmux, sim)
    tmux.run("send-keys", ":summary", "Enter")
    assert poll_screen(lambda: "Handoff summary (Markdown)" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: "Summary sent to the clipboard" in tmux.screen(), timeout=30), \
        tmux.screen()
    assert poll_screen(lambda: "# GPU cluster handoff" in tmux.run("show-buffer").stdout,
                 timeout=30), tmux.run("list-buffers").stdout
    buffer = tmux.run("show-buffer").stdout
    for code in codes:
        assert f"**{code}** on " in buffer, code
    assert f"**cordon** on {node}" in buffer and outcome["result"] in buffer
    sim.send_signal(signal.SIGCONT)
    tmux.run("send-keys", "Escape")  # alone: ESC then q in one write would read as alt+q
    assert poll_screen(lambda: "Handoff summary (Markdown)" not in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
