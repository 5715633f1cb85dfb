"""Issue 29, item 1 with the real binary in tmux at 80x24: ``:mig-safe`` from the MIG view.

The newcomer chose an idle A100 in the MIG view (``3``) and typed ``:mig-safe``; the plan was
made for the node list's cursor, an H100 with a running trainer that it would evict, and no
prompt said which node. Here the operator does the same by the keys: the node list's cursor
is read from its ``▶``, the MIG view's cursor is moved to an A100 card other than that node,
``:mig-safe`` is typed; every prompt and the dialog name the MIG view's node, and the audit
log's intent line after ``y`` (written before anything is sent) targets it alone. Content
only: every wait is a poll for text, never a timed assertion.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.ui.helpers import REPO, Tmux, poll_screen, tmux  # noqa: F401 - the fixture

pytestmark = pytest.mark.tmux
ARROWED = re.compile(r"▶\s+(gke-[a-z0-9-]+)")


def arrowed(screen: str) -> str | None:
    """The node on the row or card that carries the ``▶``."""
    found = ARROWED.search(screen)
    return found.group(1) if found else None


def flat(screen: str) -> str:
    """The screen as one line (a title wrapped at 80 columns reads whole)."""
    return " ".join(screen.split())


def test_mig_safe_from_the_mig_view_targets_its_card_not_the_node_list_cursor(
        tmux: Tmux, tmp_path: Path) -> None:  # noqa: F811
    audit = tmp_path / "audit.jsonl"
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {sys.executable} -m "
               f"gputui --demo --speed 20 --audit-log {audit}; "
               "echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "80", "-y", "24", command)
    assert started.returncode == 0, started.stderr
    assert poll_screen(lambda: "● live" in tmux.screen() and arrowed(tmux.screen()) is not None), \
        tmux.screen()
    list_cursor = arrowed(tmux.screen())
    tmux.run("send-keys", "3")
    assert poll_screen(lambda: "strategy" in tmux.screen()
                               and arrowed(tmux.screen()) is not None), \
        tmux.screen()
    for _ in range(10):  # down to an A100 card that is not the node list's cursor
        card = arrowed(tmux.screen())
        if card is not None and "a100" in card and card != list_cursor:
            break
        tmux.run("send-keys", "Down")
        poll_screen(lambda: arrowed(tmux.screen()) != card, timeout=10)
    node = arrowed(tmux.screen())
    assert node is not None and "a100" in node and node != list_cursor, tmux.screen()
    tmux.run("send-keys", ":", "mig-safe", "Enter")
    assert poll_screen(lambda: f"mig: safe change for {node}: MIG config" in flat(tmux.screen())), \
        tmux.screen()
    tmux.run("send-keys", "Down", "Enter")  # a layout other than the current all-disabled
    assert poll_screen(lambda: f"mig: safe change for {node}: GPU pods on the node" in
                flat(tmux.screen())), tmux.screen()
    tmux.run("send-keys", "Enter")  # wait for them
    assert poll_screen(lambda: "Dry run: passed" in tmux.screen()), tmux.screen()
    assert f"Targets: {node}" in flat(tmux.screen()), tmux.screen()
    tmux.run("send-keys", "y")
    assert poll_screen(lambda: audit.exists() and '"phase":"intent"' in audit.read_text()), \
        tmux.screen()
    intent = json.loads(audit.read_text().splitlines()[0])
    assert intent["action"] == "mig-config-safe" and intent["targets"] == [node], intent
    tmux.run("send-keys", "b")  # the safe change runs on; quitting asks first
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "stop and quit?" in tmux.screen()
                or "gputui exited with 0" in tmux.screen()), tmux.screen()
    if "stop and quit?" in tmux.screen():
        tmux.run("send-keys", "y")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen()), tmux.screen()
