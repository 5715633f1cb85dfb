"""The journeys of issue 20 with the real binary in tmux at 80x24: a refused drain and a canary.

The default scenario (``healthy``) runs a trainer on ``...-4vvm`` that a PodDisruptionBudget
protects, so a drain of that node is refused eviction after eviction. The operator starts
it, presses ``b``, moves to ``:upgrades`` and back, sees the header's running line change as
the eviction is retried, opens ``:ops`` (the drain with its pod), stops it with ``x`` (and
``y`` to the question), and the audit log says it was stopped. Content only: every wait is
a poll for text, never a timed assertion.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.ui.helpers import CANARY, REPO, Tmux, poll_screen, tmux  # noqa: F401 - the fixture

pytestmark = pytest.mark.tmux
NODE = "gke-prod-h100-pool-7f3a-4vvm"


def running_line(screen: str) -> str:
    """The header's running line, or ``""``."""
    return next((line for line in screen.splitlines() if line.startswith("⟳ 1")), "")


def test_a_refused_drain_runs_in_the_background_and_x_stops_it(tmux: Tmux,  # noqa: F811
                                                               tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {sys.executable} -m "
               f"gputui --demo --speed 20 --audit-log {audit}; "
               "echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "80", "-y", "24", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "● live" in tmux.screen() and "gke-" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "/", "4vvm", "Enter")
    assert poll_screen(lambda: "hdmv" not in tmux.screen()
                               and "4vvm" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "r")
    assert poll_screen(lambda: "Drain options" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "Enter")
    assert poll_screen(lambda: "Seconds to keep retrying" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "Enter")
    assert poll_screen(lambda: "Dry run: passed" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: "Background (b)" in tmux.screen()
                and "refused by PodDisruptionBudget" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "b")
    assert poll_screen(lambda: "evicted, 1 refused by budget" in running_line(tmux.screen())), \
        tmux.screen()
    first = running_line(tmux.screen())
    # "running" is dropped when the line would not fit 80 columns (more evicted, more tries)
    assert first.startswith(("⟳ 1 running: drain 4vvm ", "⟳ 1: drain 4vvm ")) and \
        "evicted, 1 refused by budget trainer-llama-pdb" in first, first
    tmux.run("send-keys", "2")
    assert poll_screen(lambda: "maxParallelUpgrades" in tmux.screen()
                and running_line(tmux.screen())), tmux.screen()
    tmux.run("send-keys", "1")
    assert poll_screen(lambda: "4vvm" in tmux.screen()), tmux.screen()
    # retried: the try count on the line moves
    assert poll_screen(lambda: running_line(tmux.screen()) not in ("", first), timeout=30), \
        tmux.screen()
    tmux.run("send-keys", ":", "ops", "Enter")
    assert poll_screen(lambda: "OPERATION" in tmux.screen() and f"Drain {NODE}" in tmux.screen()
                and "ml-training/trainer-llama" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "x")
    assert poll_screen(lambda: f"Stop Drain {NODE}?" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: "■ stopped" in tmux.screen()), tmux.screen()
    assert poll_screen(lambda: audit.exists() and len(audit.read_text().splitlines()) == 2)
    intent, outcome = (json.loads(line) for line in audit.read_text().splitlines())
    assert intent["action"] == "drain" and outcome["id"] == intent["id"]
    assert outcome["interrupted"] == "x" and outcome["result"].startswith("cancelled: ")
    tmux.run("send-keys", "q")  # nothing runs now: no question
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen()), tmux.screen()


def test_a_canary_runs_in_the_background_and_x_stops_it(tmux: Tmux,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """The same journey for a canary: at speed 1 its node takes minutes to roll, so the
    operation still watches it when it is backgrounded, listed in ``:ops`` and stopped; the
    audit outcome says stopped (x) and names the holds it left."""
    audit, scenario = tmp_path / "audit.jsonl", tmp_path / "canary.yaml"
    scenario.write_text(CANARY)
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {sys.executable} -m "
               f"gputui --demo --scenario {scenario} --speed 1 --audit-log {audit}; "
               "echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "80", "-y", "24", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "● live" in tmux.screen() and tmux.screen().count("gke-") >= 4), \
        tmux.screen()
    tmux.run("send-keys", ":", "canary", "Enter")
    assert poll_screen(lambda: "580.82.07" in tmux.screen()
                               or "version" in tmux.screen().lower()), \
        tmux.screen()
    tmux.run("send-keys", "580.82.07", "Enter")
    assert poll_screen(lambda: "Dry run: passed" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "580.82.07", "Enter")  # the typed confirmation of a rollout
    assert poll_screen(lambda: "Background (b)" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "b")
    assert poll_screen(lambda: "canary" in running_line(tmux.screen())), tmux.screen()
    tmux.run("send-keys", ":", "ops", "Enter")
    assert poll_screen(lambda: "OPERATION" in tmux.screen() and "Canary driver 580.82.07" in
                tmux.screen()), tmux.screen()
    tmux.run("send-keys", "x")
    assert poll_screen(lambda: "Stop Canary driver 580.82.07" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: "■ stopped" in tmux.screen()), tmux.screen()
    assert poll_screen(lambda: audit.exists() and len(audit.read_text().splitlines()) == 2)
    intent, outcome = (json.loads(line) for line in audit.read_text().splitlines())
    assert intent["action"] == "upgrade-canary" and outcome["id"] == intent["id"]
    assert outcome["interrupted"] == "x" and outcome["result"].startswith("cancelled: canary")
    assert "holds left on 3 node(s)" in outcome["result"], outcome
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen()), tmux.screen()
