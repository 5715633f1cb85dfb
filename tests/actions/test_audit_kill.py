"""``kill -9`` mid-drain: the intent line, with every write the plan holds, is on disk.

Real processes, as an operator's session would be: ``python -m gputui sim`` serves the
emulated cluster (evictions slowed to 3 s each, so the drain is certainly in the middle when
the kill comes), and a second process drives a drain through the Runner, exactly as the TUI's
worker does. It is killed with SIGKILL once the server has the node cordoned: no handler,
no ``finally``, no outcome line can run; only what was fsync'd before the first write stands.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

REPO = Path(__file__).resolve().parents[2]

_DRIVER = """
import sys, time
from gputui.actions.audit import AuditLog
from gputui.actions.base import Cancel
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.settings import Settings
from gputui.sources.connect import read_snapshot
from gputui.sources.kubeconfig import load_target
from gputui.sources.writer import KubeWriter

kubeconfig, audit = sys.argv[1], sys.argv[2]
settings = Settings(kubeconfig=kubeconfig)
deadline = time.monotonic() + 60
while True:  # the workloads are placed a moment after the cluster starts
    snapshot = read_snapshot(settings)
    node = next((n for n in sorted(snapshot.nodes) if "a100" in n
                 and snapshot.nodes[n].gpu_pods), None)
    if node or time.monotonic() > deadline:
        break
    time.sleep(0.5)
runner = Runner(KubeWriter(load_target(kubeconfig)), AuditLog(audit))
runner.check_permissions()
plan = runner.plan(action("drain"), snapshot, [node], {
    "options": "also delete emptyDir data and force unmanaged pods", "timeout": "120"})
dry = runner.dry_run(plan)
print("node", node, "dry run", dry.summary(), flush=True)
runner.apply(action("drain"), plan, dry, lambda p: None, Cancel())
print("drain ended", flush=True)
"""


def _poll(check: Callable[[], object], timeout: float) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    return None


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Path]:
    """``gputui sim`` in its own process; yields its kubeconfig."""
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", "healthy", "--speed", "10",
         "--kubeconfig-out", str(config), "--faults", "latency:3000~/eviction"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert process.stdout is not None
        assert "serving the Kubernetes API" in process.stdout.readline()
        yield config
    finally:
        process.terminate()
        process.wait(30)


def test_sigkill_mid_drain_leaves_the_intent_line_with_the_plans_writes(
        sim: Path, tmp_path: Path) -> None:
    audit = tmp_path / "state" / "audit.jsonl"
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    driver = subprocess.Popen([sys.executable, str(script), str(sim), str(audit)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert driver.stdout is not None
        announced = driver.stdout.readline()
        assert announced.startswith("node "), announced + driver.stdout.read()
        node = announced.split()[1]
        core = k8s.CoreV1Api(k8s_config.new_client_from_config(str(sim)))
        assert _poll(lambda: core.read_node(node).spec.unschedulable, timeout=60)
        driver.send_signal(signal.SIGKILL)  # the cordon landed, the evictions are under way
        assert driver.wait(30) == -signal.SIGKILL
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(30)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [line["phase"] for line in lines] == ["intent"]  # nothing could close it
    (intent,) = lines
    assert intent["action"] == "drain" and intent["targets"] == [node]
    assert intent["user"] == "operator" and intent["user_source"] == "server"
    changes = intent["change"]
    assert changes[0]["verb"] == "patch" and changes[0]["body"] == {
        "spec": {"unschedulable": True}}
    evictions = [c for c in changes if c["verb"] == "create" and c["kind"] == "Pod"]
    assert evictions and all(c["body"]["kind"] == "Eviction" for c in evictions)
    assert all("--delete-emptydir-data --force" in c["kubectl"] for c in changes)
    assert intent["dry_run"].startswith("passed") and intent["params"]["timeout"] == 120.0
