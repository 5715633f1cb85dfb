"""The audit log: one JSON line per applied or failed action, mode 0600, never a secret."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

import pytest

from gputui.actions.audit import AuditLog
from gputui.actions.base import Change, Plan
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import gpu_node, snapshot_of


def test_applied_and_failed_actions_are_audited(server: EmulatedCluster, writer: KubeWriter,
                                                tmp_path: Path) -> None:
    server.store.create("nodes", gpu_node("gpu-1"))
    path = tmp_path / "state" / "gputui" / "audit.jsonl"
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    act = action("cordon")
    plan = runner.plan(act, snapshot_of(server, tmp_path), ["gpu-1"], {})
    runner.apply(act, plan, runner.dry_run(plan), lambda p: None, threading.Event())
    server.set_deny("patch:nodes")
    plan = runner.plan(action("uncordon"), snapshot_of(server, tmp_path), ["gpu-1"], {})
    runner.apply(action("uncordon"), plan, runner.dry_run(plan), lambda p: None,
                 threading.Event())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert set(first) >= {"time", "context", "user", "action", "targets", "change", "dry_run",
                          "result", "error"}
    assert first["context"] == "gputui-demo" and first["user"] == "operator"
    assert first["action"] == "cordon" and first["targets"] == ["gpu-1"]
    assert first["change"] == [{"verb": "patch", "kind": "Node", "name": "gpu-1",
                                "body": {"spec": {"unschedulable": True}},
                                "kubectl": "kubectl cordon gpu-1", "patch_type": "merge"}]
    assert first["dry_run"] == "passed (1 of 1 write checked)" and first["result"].startswith("ok: ")
    assert first["error"] is None and first["time"].endswith("Z")
    assert second["action"] == "uncordon" and second["result"].startswith("failed: ")
    assert "forbidden" in second["error"] and second["dry_run"].startswith("refused: ")
    text = path.read_text()
    token = "gputui-demo-token"
    assert token in (tmp_path / "kubeconfig").read_text()
    assert token not in text and "Bearer" not in text


def test_credential_looking_values_are_redacted(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl")
    plan = Plan("x", "x", ("n",), (Change("patch", "Node", "n", {"metadata": {"annotations": {
        "example.com/token": "s3cret", "ok": "fine"}}}, "kubectl ...", "s"),),
        params={"password": "hunter2"})
    log.record(context="c", user="u", plan=plan, dry_run="passed", result=None)
    text = (tmp_path / "a.jsonl").read_text()
    assert "s3cret" not in text and "hunter2" not in text and "fine" in text


def test_default_audit_log_is_audit_jsonl_in_the_state_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert Settings().audit_log == str(tmp_path / "gputui" / "audit.jsonl")
