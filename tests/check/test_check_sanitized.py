"""``gputui check | cat -v`` shows no ``^[``: a hostile condition message, annotation and
event reach the report readable and inert, in the table and in ``--json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from gputui.sim.cluster import EmulatedCluster
from tests.sources.helpers import GPU, cluster_policy, upgrade_event

REPO = Path(__file__).resolve().parents[2]
Run = Callable[..., subprocess.CompletedProcess[str]]
HOSTILE = "\x1b]2;PWNED\x1b\\ \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H \x9b31m"
SHOWN = r"\x1b]2;PWNED\x1b\ \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H \x9b31m"


@pytest.fixture
def hostile_cluster(api_only: EmulatedCluster, tmp_path: Path) -> Path:
    """A NotReady GPU node whose condition message and annotation carry escapes, and a
    GPUDriverUpgrade event about it that does too, written with the kubernetes client."""
    path = api_only.write_kubeconfig(tmp_path / "kc")
    api = k8s.CoreV1Api(k8s_config.new_client_from_config(str(path)))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    api.create_node({"metadata": {"name": "gpu-0", "labels": dict(GPU),
                                  "annotations": {"note": HOSTILE}}})
    api.patch_node_status("gpu-0", {"status": {"capacity": {"nvidia.com/gpu": "8"}, "conditions": [
        {"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": HOSTILE,
         "lastTransitionTime": "2026-12-01T10:00:00Z"}]}})
    api.create_namespaced_event("default", upgrade_event("gpu-0", "e1", HOSTILE))
    return path


def _piped(args: str, tmp_path: Path) -> bytes:
    """``gputui ARGS | cat -v`` through a shell, as an operator would look at it."""
    environ = {k: v for k, v in os.environ.items()
               if k != "KUBECONFIG" and not k.startswith("GPUTUI_")}
    environ.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
                   XDG_STATE_HOME=str(tmp_path / "state"), PYTHONPATH=str(REPO))
    return subprocess.run(f"{sys.executable} -m gputui {args} | cat -v", shell=True,
                          capture_output=True, env=environ, timeout=120, check=False,
                          stdin=subprocess.DEVNULL).stdout


def test_table_shows_the_message_inert(gputui: Run, hostile_cluster: Path,
                                       tmp_path: Path) -> None:
    result = gputui("check", "--kubeconfig", str(hostile_cluster))
    assert result.returncode == 1, result.stderr
    assert "\x1b" not in result.stdout and "\x9b" not in result.stdout
    row = next(line for line in result.stdout.splitlines() if "node-not-ready" in line)
    assert "gpu-0 is NotReady" in row and row.endswith(f": {SHOWN}")  # quotes the condition
    shown = _piped(f"check --kubeconfig {hostile_cluster}", tmp_path)
    assert b"NotReady" in shown and b"^[" not in shown and b"M-^[" not in shown
    assert b"^G" not in shown  # BEL


def test_json_holds_no_control_character(gputui: Run, hostile_cluster: Path,
                                         tmp_path: Path) -> None:
    result = gputui("check", "--json", "--kubeconfig", str(hostile_cluster))
    assert result.returncode == 1, result.stderr
    assert "\\u001b" not in result.stdout and "\x9b" not in result.stdout
    report = json.loads(result.stdout)
    messages = [f["message"] for f in report["findings"] if f["code"] == "node-not-ready"]
    assert messages and SHOWN in messages[0]
    shown = _piped(f"check --json --kubeconfig {hostile_cluster}", tmp_path)
    assert b"node-not-ready" in shown and b"^[" not in shown
