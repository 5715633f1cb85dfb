"""Cluster text cannot drive the operator's terminal: the real binary in tmux.

A pod log line (written by the emulator's ``log`` timeline action), an event, a node's Ready
condition message and a node annotation (written with the kubernetes client) carry the
attacks of issue 18: set the title (OSC 2), write the clipboard (OSC 52), clear the screen
(CSI 2J). With the pod log and the node's findings on screen, tmux's pane title is not
``PWNED``, no paste buffer was created (``set-clipboard on`` makes tmux keep what OSC 52
writes), the header is still the first line, and each attack reads as inert text.

Polls for content, never times anything.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.ui.helpers import REPO, Tmux, gputui_command, poll_screen
from tests.ui.helpers import tmux  # noqa: F401 - the fixture

pytestmark = pytest.mark.tmux
ATTACK = "pwn \x1b]2;PWNED\x1b\\ \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H end"
#: how the attack reads once cleaned
SHOWN = r"pwn \x1b]2;PWNED\x1b\ \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H end"
NS = "gpu-operator"


@pytest.fixture
def hostile_sim(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """``gputui sim`` on the healthy scenario plus a hostile driver log line; then a node's
    annotation and Ready condition and an event about its driver pod made hostile too.
    Yields the kubeconfig and the node."""
    scenario = yaml.safe_load((REPO / "gputui/sim/scenarios/healthy.yaml").read_text())
    scenario["timeline"] = [{"at": "20s", "action": "log", "node": "h100/0", "line": ATTACK}]
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(scenario))
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", str(path), "--speed", "20",
         "--kubeconfig-out", str(config)], cwd=REPO, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        assert poll_screen(config.exists, timeout=60), "gputui sim did not start"
        api = k8s.CoreV1Api(k8s_config.new_client_from_config(str(config)))
        found: list[k8s.V1Pod] = []

        def logged() -> bool:
            pods = api.list_namespaced_pod(NS, label_selector="app=nvidia-driver-daemonset")
            found[:] = [p for p in pods.items if p.status.phase == "Running" and "PWNED" in
                        api.read_namespaced_pod_log(p.metadata.name, NS)]
            return bool(found)
        assert poll_screen(logged, timeout=60), "the log timeline action did not write"
        pod, node = found[0].metadata.name, found[0].spec.node_name
        api.patch_node(node, {"metadata": {"annotations": {"example.com/note": ATTACK}}})
        api.patch_node_status(node, {"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
             "message": ATTACK, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
        api.create_namespaced_event(NS, {
            "metadata": {"name": "hostile"}, "reason": "Failed", "type": "Warning",
            "message": ATTACK, "involvedObject": {"kind": "Pod", "namespace": NS, "name": pod}})
        yield config, node
    finally:
        process.terminate()
        process.wait(timeout=30)


def _untouched(tmux: Tmux) -> None:
    """Title and clipboard as before, the header still on the first line."""
    assert "PWNED" not in tmux.run("display", "-p", "#{pane_title}").stdout
    assert tmux.run("list-buffers").stdout == ""
    assert tmux.screen().startswith("gputui ▸"), tmux.screen()


def test_hostile_text_is_shown_inert(hostile_sim: tuple[Path, str], tmux: Tmux) -> None:
    config, node = hostile_sim
    command = (f"env -u COLUMNS -u LINES TERM=xterm-256color PYTHONPATH={REPO} "
               f"{gputui_command()} --kubeconfig "
               f"{config}; echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "200", "-y", "70", command)
    assert started.returncode == 0, started.stderr
    # tmux keeps what OSC 52 writes as a paste buffer (set before gputui has drawn)
    assert tmux.run("set-option", "-g", "set-clipboard", "on").returncode == 0
    # the NotReady node sorts first (findings) and is selected
    assert poll_screen(lambda: node in tmux.screen() and "● live" in tmux.screen()), tmux.screen()
    tmux.run("send-keys", "d")  # the Describe tab: the node's findings quote the condition
    assert poll_screen(lambda: "is NotReady" in tmux.screen() and SHOWN in tmux.screen(),
                 timeout=30), tmux.screen()
    _untouched(tmux)
    tmux.run("send-keys", "l")  # the driver pod's log and its events
    assert poll_screen(lambda: tmux.screen().count(SHOWN) >= 2 and "Warning" in tmux.screen(),
                 timeout=30), tmux.screen()
    _untouched(tmux)
    tmux.run("send-keys", "Escape")  # wait for it: ESC then q at once reads as alt+q
    assert poll_screen(lambda: "newest last" not in tmux.screen(), timeout=30), tmux.screen()
    tmux.run("send-keys", "q")
    assert poll_screen(lambda: "gputui exited with 0" in tmux.screen(), timeout=60), tmux.screen()
    assert "PWNED" not in tmux.run("display", "-p", "#{pane_title}").stdout
