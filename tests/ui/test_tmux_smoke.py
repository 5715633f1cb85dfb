"""One smoke test of the real binary in a real terminal: ``gputui --demo`` inside tmux.

It asserts content, never timing: polls are generous and only wait for text to appear.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen, tmux  # noqa: F401

pytestmark = pytest.mark.tmux


def test_demo_shows_nodes_help_and_quits(tmux: Tmux) -> None:
    # The wrapper keeps the pane open after gputui exits, so a crash at start-up leaves its
    # one-line error on screen for the assertion message, and the exit code can be read.
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {gputui_command()} --demo "
               "--speed 20; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "120", "-y", "40", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "gke-" in tmux.screen() and "NAME" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "?")
    assert poll_screen(lambda: "WHAT IT DOES" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "Escape")
    assert poll_screen(lambda: "WHAT IT DOES" not in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Path]:
    """``gputui sim`` as its own process; yields the kubeconfig it wrote."""
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--speed", "20", "--kubeconfig-out",
         str(config)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert poll_screen(config.exists, timeout=60), "gputui sim did not start"
        yield config
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_cordon_with_c_y_reaches_the_api_and_the_audit_log(tmux: Tmux, sim: Path,
                                                           tmp_path: Path) -> None:
    import json

    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    audit = tmp_path / "audit.jsonl"
    command = (f"env TERM=xterm-256color PYTHONPATH={REPO} {gputui_command()} --kubeconfig "
               f"{sim} --audit-log {audit}; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "120", "-y", "40", command)
    assert started.returncode == 0, started.stderr
    # actions wait for every list (a plan from half the cluster would guess): the header
    # says "live" once they are read
    assert poll_screen(lambda: "gke-" in tmux.screen() and "● live" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "c")
    assert poll_screen(lambda: "kubectl cordon" in tmux.screen()), tmux.screen()
    assert poll_screen(lambda: "Dry run: passed" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: audit.exists() and '"phase":"outcome"' in audit.read_text(),
                 timeout=30), tmux.screen()
    entry, outcome = (json.loads(line) for line in audit.read_text().splitlines())
    assert entry["action"] == "cordon" and outcome["result"].startswith("ok: ")
    (node,) = entry["targets"]
    api = k8s.CoreV1Api(k8s_config.new_client_from_config(str(sim)))
    assert api.read_node(node).spec.unschedulable is True
    cordoned = [n.metadata.name for n in api.list_node().items if n.spec.unschedulable]
    assert cordoned == [node]
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
