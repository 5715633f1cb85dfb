"""The audit log: an fsync'd intent line before the first write, an outcome line with the
same id after, the server's identity, 0600 in 0700, never a secret."""

from __future__ import annotations

import json
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from gputui.actions.audit import AuditLog, Identity
from gputui.actions.base import Cancel, Change, Plan, Progress
from gputui.actions.registry import action
from gputui.actions.runner import DryRun, Runner
from gputui.settings import Settings
from gputui.sim.apiserver.rbac import Identity as SimIdentity
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import budget, gpu_node, gpu_pod, snapshot_of
from tests.conftest import hook_server_requests

DRAIN_ALL = {"options": "also delete emptyDir data and force unmanaged pods", "timeout": "60"}


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class WriteWatch:
    """Each write that is not a dry run, as it reaches the server: (method, path, what the
    audit file held at that moment)."""

    def __init__(self) -> None:
        self.audit: Path | None = None
        self.seen: list[tuple[str, str, str]] = []

    def note(self, request: web.Request) -> None:
        if request.method == "GET" or "dryRun" in request.query or "selfsubject" in \
                request.path:
            return
        held = self.audit.read_text() if self.audit and self.audit.is_file() else ""
        self.seen.append((request.method, request.path, held))


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> WriteWatch:
    """Request it before ``server``: a server-side hook that reads the audit file at the
    moment each real write arrives (the strongest "before" there is)."""
    watch = WriteWatch()
    hook_server_requests(monkeypatch, watch.note)
    return watch


@pytest.fixture
def alice(server: EmulatedCluster) -> Iterator[None]:
    """The server says the caller is alice@example.com (the kubeconfig entry is "operator")."""
    server.set_identity(SimIdentity("alice@example.com", ("gpu-oncall", "system:authenticated")))
    yield
    server.set_identity(None)


def _cordon(server: EmulatedCluster, writer: KubeWriter, tmp_path: Path,
            path: Path) -> tuple[Runner, Any]:
    server.store.create("nodes", gpu_node("gpu-1"))
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    return runner, runner.plan(action("cordon"), snapshot_of(server, tmp_path), ["gpu-1"], {})


def test_intent_and_outcome_lines_share_an_id_and_name_the_server_user(
        writes: WriteWatch, server: EmulatedCluster, alice: None, writer: KubeWriter,
        tmp_path: Path) -> None:
    path = tmp_path / "state" / "gputui" / "audit.jsonl"
    runner, plan = _cordon(server, writer, tmp_path, path)
    result = runner.apply(action("cordon"), plan, runner.dry_run(plan), lambda p: None, Cancel())
    assert result.ok
    intent, outcome = audit_lines(path)
    assert list(intent) == ["id", "time", "phase", "context", "cluster", "user", "user_source",
                            "action", "targets", "change", "params", "dry_run"]
    kube_system = server.store.get("namespaces", "kube-system")
    assert intent["cluster"] == {"server": server.url, "uid": kube_system["metadata"]["uid"]}
    assert list(outcome) == ["id", "time", "phase", "result", "error", "done", "interrupted"]
    assert intent["id"] == outcome["id"] and intent["phase"] == "intent"
    assert outcome["phase"] == "outcome" and intent["time"] <= outcome["time"]
    assert intent["user"] == "alice@example.com" and intent["user_source"] == "server"
    assert intent["context"] == "gputui-demo" and intent["targets"] == ["gpu-1"]
    assert intent["change"] == [{"verb": "patch", "kind": "Node", "name": "gpu-1",
                                 "body": {"spec": {"unschedulable": True}},
                                 "kubectl": "kubectl cordon gpu-1", "patch_type": "merge"}]
    assert intent["dry_run"] == "passed (1 of 1 write checked)" and intent["params"] == {}
    assert outcome["result"].startswith("ok: ") and outcome["error"] is None
    assert outcome["interrupted"] is None
    assert [(d["verb"], d["kind"], d["name"]) for d in outcome["done"]] == [
        ("patch", "Node", "gpu-1")]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert "emulated-placeholder-token" not in path.read_text() and "Bearer" not in path.read_text()
    # the one real write found the intent line already on disk
    assert [(m, p) for m, p, _ in writes.seen] == [("PATCH", "/api/v1/nodes/gpu-1")]


def test_intent_is_on_disk_before_the_first_write_of_a_drain(
        writes: WriteWatch, server: EmulatedCluster, writer: KubeWriter,
        tmp_path: Path) -> None:
    store = server.store
    store.create("nodes", gpu_node("gpu-1"))
    store.create("pods", gpu_pod("train-0", "gpu-1"))
    store.create("pods", gpu_pod("infer-0", "gpu-1", owner=("ReplicaSet", "infer"),
                                 labels={"app": "infer"}, gpus=1))
    path = tmp_path / "audit.jsonl"
    writes.audit = path
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["gpu-1"], DRAIN_ALL)
    result = runner.apply(action("drain"), plan, runner.dry_run(plan), lambda p: None, Cancel())
    assert result.ok, result
    assert [m for m, _, _ in writes.seen] == ["PATCH", "POST", "POST"]
    for _, _, held in writes.seen:  # every write, the first included, found the intent
        (intent,) = [json.loads(line) for line in held.splitlines()]
        assert intent["phase"] == "intent" and intent["action"] == "drain"
    intent, outcome = audit_lines(path)
    assert outcome["id"] == intent["id"]
    cordon, *evictions = outcome["done"]
    assert (cordon["verb"], cordon["kind"], cordon["name"]) == ("patch", "Node", "gpu-1")
    assert sorted((d["verb"], d["subresource"], d["namespace"], d["name"]) for d in evictions
                  ) == [("create", "eviction", "ml", "infer-0"), ("create", "eviction", "ml",
                                                                "train-0")]


def test_a_drain_stopped_by_sigterm_is_recorded_as_interrupted_with_what_was_done(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    store = server.store
    store.create("nodes", gpu_node("gpu-1"))
    store.create("pods", gpu_pod("train-0", "gpu-1"))
    store.create("pods", gpu_pod("infer-0", "gpu-1", owner=("ReplicaSet", "infer"),
                                 labels={"app": "infer"}, gpus=1))
    store.create("poddisruptionbudgets.policy", budget("trainer-pdb"))
    path = tmp_path / "audit.jsonl"
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["gpu-1"], DRAIN_ALL)
    dry = runner.dry_run(plan)
    cancel = Cancel()
    blocked = threading.Event()

    def progress(report: Progress) -> None:
        if report.blocked:
            blocked.set()

    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(
        runner.apply(action("drain"), plan, dry, progress, cancel)))
    worker.start()
    assert blocked.wait(30), "the budget never held the trainer"
    cancel.stop("SIGTERM")
    worker.join(30)
    assert results and results[0].cancelled
    intent, outcome = audit_lines(path)
    assert outcome["id"] == intent["id"] and outcome["interrupted"] == "SIGTERM"
    assert outcome["result"].startswith("cancelled: ")
    done = [(d["verb"], d["name"]) for d in outcome["done"]]
    assert done == [("patch", "gpu-1"), ("create", "infer-0")]  # not the held trainer


def test_a_plan_never_dry_run_is_not_recorded_as_passed(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    runner, plan = _cordon(server, writer, tmp_path, path)
    runner.apply(action("cordon"), plan, DryRun(), lambda p: None, Cancel())
    intent, _ = audit_lines(path)
    assert intent["dry_run"] == "not run"


class _Exploding:
    """An action that cordons, then fails with ``error`` (a bug, or a KeyboardInterrupt)."""

    id = "cordon"
    permissions = ()

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def apply(self, plan: Plan, writer: Any, progress: Any, cancel: Any) -> Any:
        writer.patch(plan.changes[0])
        raise self.error


def test_an_apply_that_raises_still_gets_its_outcome_line(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    runner, plan = _cordon(server, writer, tmp_path, path)
    dry = runner.dry_run(plan)
    result = runner.apply(_Exploding(RuntimeError("boom")), plan, dry,  # type: ignore[arg-type]
                          lambda p: None, Cancel())
    assert not result.ok and "RuntimeError: boom" in (result.error or "")
    with pytest.raises(KeyboardInterrupt):
        runner.apply(_Exploding(KeyboardInterrupt()), plan, dry,  # type: ignore[arg-type]
                     lambda p: None, Cancel())
    first_intent, first, second_intent, second = audit_lines(path)
    assert first["id"] == first_intent["id"] and "boom" in first["error"]
    assert [d["name"] for d in first["done"]] == ["gpu-1"] and first["interrupted"] is None
    assert second["id"] == second_intent["id"] != first["id"]
    assert second["interrupted"] == "KeyboardInterrupt"
    assert [d["name"] for d in second["done"]] == ["gpu-1"]


def test_without_a_server_identity_the_kubeconfig_user_is_named_as_such(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    server.set_deny("create:selfsubjectreviews.authentication.k8s.io")
    path = tmp_path / "audit.jsonl"
    runner, plan = _cordon(server, writer, tmp_path, path)
    assert runner.identity() == Identity("operator", "kubeconfig")
    runner.apply(action("cordon"), plan, runner.dry_run(plan), lambda p: None, Cancel())
    intent, _ = audit_lines(path)
    assert (intent["user"], intent["user_source"]) == ("operator", "kubeconfig")


def test_credential_looking_values_are_redacted(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl")
    plan = Plan("x", "x", ("n",), (Change("patch", "Node", "n", {"metadata": {"annotations": {
        "example.com/token": "s3cret", "ok": "fine"}}}, "kubectl ...", "s"),),
        params={"password": "hunter2"})
    log.intent(context="c", identity=Identity("u"), plan=plan, dry_run="passed")
    text = (tmp_path / "a.jsonl").read_text()
    assert "s3cret" not in text and "hunter2" not in text and "fine" in text


def test_ids_are_unique_and_sort_by_time(tmp_path: Path) -> None:
    times = iter([1000.0, 1000.0, 1000.5, 2000.0])
    log = AuditLog(tmp_path / "a.jsonl", clock=lambda: next(times))
    plan = Plan("x", "x")
    ids = [log.intent(context="c", identity=Identity("u"), plan=plan, dry_run="not run")
           for _ in range(4)]
    assert len(set(ids)) == 4 and ids[2] < ids[3] and max(ids[:2]) < ids[2]
    assert [line["time"] for line in audit_lines(tmp_path / "a.jsonl")][2] == \
        "1970-01-01T00:16:40.500Z"


def test_default_audit_log_is_audit_jsonl_in_the_state_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert Settings().audit_log == str(tmp_path / "gputui" / "audit.jsonl")
