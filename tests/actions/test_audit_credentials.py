"""The audit log never holds a credential, even when a failure's text quotes one."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from gputui.actions.audit import AuditLog
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.kubeconfig import load_target
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import gpu_node, snapshot_of
from tests.helpers import TOKEN, assert_no_secret, planted


def test_refused_and_crashed_applies_audit_no_secret(server: EmulatedCluster,
                                                      tmp_path: Path) -> None:
    server.store.create("nodes", gpu_node("gpu-1"))
    snapshot = snapshot_of(server, tmp_path)
    writer = KubeWriter(load_target(str(planted(tmp_path / "kc", server.url))))
    path = tmp_path / "audit.jsonl"
    runner = Runner(writer, AuditLog(path))
    try:
        runner.check_permissions()
        cordon = action("cordon")
        plan = runner.plan(cordon, snapshot, ["gpu-1"], {})
        dry_run = runner.dry_run(plan)
        server.set_tokens(frozenset({"another-token"}))  # the token is refused: 401
        refused = runner.apply(cordon, plan, dry_run, lambda p: None, threading.Event())
        assert not refused.ok and "Unauthorized" in (refused.error or "")

        def crash(*args: Any) -> None:
            raise ValueError(f"Invalid header value {('Bearer ' + TOKEN + chr(10)).encode()!r}")

        server.set_tokens(None)
        original = type(cordon).apply
        try:
            type(cordon).apply = crash  # type: ignore[method-assign]
            crashed = runner.apply(cordon, plan, dry_run, lambda p: None, threading.Event())
        finally:
            type(cordon).apply = original  # type: ignore[method-assign]
        assert not crashed.ok
    finally:
        writer.close()
    text = path.read_text()
    assert len(text.splitlines()) == 4 and "Invalid header value" in text  # intent, outcome x2
    assert_no_secret(text)
