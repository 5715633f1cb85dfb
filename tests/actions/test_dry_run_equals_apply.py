"""Dry run = apply: every write of a plan is dry-run, "nothing to change" is never "passed",
and a drain's plan lists every pod the apply will evict (from the server, sorted by
kubectl's rules), so the dry run checks each and the audit log holds each write. All through
the real client against the emulated API server, counting what the server received."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from gputui.actions.audit import AuditLog
from gputui.actions.base import Change, Plan
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import (
    budget,
    driver_daemonset,
    gpu_node,
    gpu_pod,
    snapshot_of,
    writer_for,
)
from tests.apiserver.conftest import pod, seed_cluster_policy

EMPTYDIR = "also delete emptyDir data"
FORCE = "also force unmanaged pods"


@pytest.fixture
def cluster(request_queries: list[tuple[str, str]],
            api_only: EmulatedCluster) -> EmulatedCluster:
    """``api_only`` with the query-recording log installed (``request_queries``)."""
    return api_only


@pytest.fixture
def runner(cluster: EmulatedCluster, tmp_path: Path) -> Any:
    made = Runner(writer_for(cluster, tmp_path), AuditLog(tmp_path / "audit.jsonl"))
    made.check_permissions()
    yield made
    made.writer.close()  # type: ignore[attr-defined]


def _dry(seen: list[tuple[str, str]], method: str | None = None) -> list[str]:
    """Paths of the requests sent with ``dryRun=All``."""
    return [urlsplit(path).path for verb, path in seen
            if parse_qs(urlsplit(path).query).get("dryRun") == ["All"]
            and (method is None or verb == method)]


def _evictions_sent(seen: list[tuple[str, str]]) -> list[str]:
    """``namespace/pod`` of each real (not dry-run) eviction the server received."""
    out = []
    for verb, path in seen:
        parts = urlsplit(path)
        if verb == "POST" and parts.path.endswith("/eviction") and \
                "dryRun" not in parse_qs(parts.query):
            segments = parts.path.split("/")  # /api/v1/namespaces/NS/pods/NAME/eviction
            out.append(f"{segments[4]}/{segments[6]}")
    return out


def _planned_evictions(plan: Plan) -> list[str]:
    return [f"{c.namespace}/{c.name}" for c in plan.changes if c.verb == "create"]


def _plan(runner: Runner, cluster: EmulatedCluster, tmp_path: Path, action_id: str,
          targets: list[str], params: dict[str, Any] | None = None) -> Plan:
    return runner.plan(action(action_id), snapshot_of(cluster, tmp_path), targets,
                       params or {})


def _apply(runner: Runner, plan: Plan) -> Any:
    return runner.apply(action(plan.action_id), plan, runner.dry_run(plan), lambda p: None,
                        threading.Event())


def _drain_node(cluster: EmulatedCluster, *, empty_dir: bool = False,
                bare: bool = False) -> None:
    """gpu-1 as a GPU Operator node has it: a trainer, the driver DaemonSet's pod, a mirror
    pod, the completed nvidia-cuda-validator (no controller), and optionally a pod with
    emptyDir data or one without a controller."""
    store = cluster.store
    driver_daemonset(store)
    store.create("nodes", gpu_node("gpu-1"))
    store.create("pods", gpu_pod("llm-pretrain-7b-0", "gpu-1", namespace="ml-training",
                                 owner=("StatefulSet", "llm-pretrain-7b")))
    store.create("pods", pod("nvidia-driver-x", "gpu-1", namespace="gpu-operator",
                             owner=("DaemonSet", "nvidia-driver-daemonset")))
    store.create("pods", pod("static-x", "gpu-1", namespace="kube-system"))
    store.mutate("pods", "static-x", "kube-system", lambda obj: obj["metadata"].update(
        annotations={"kubernetes.io/config.mirror": "abc"}), manager="kubelet")
    validator = pod("nvidia-cuda-validator-abcde", "gpu-1", namespace="gpu-operator")
    validator["status"]["phase"] = "Succeeded"
    store.create("pods", validator)
    if empty_dir:
        store.create("pods", gpu_pod("scratch-0", "gpu-1", namespace="ml-training",
                                     owner=("StatefulSet", "scratch"), empty_dir=True,
                                     labels={"app": "scratch"}))
    if bare:
        store.create("pods", pod("debug-shell", "gpu-1", namespace="ml-training"))


# ------------------------------------------------------------------ every write is dry-run
def test_a_plan_of_27_writes_dry_runs_all_27(cluster: EmulatedCluster, runner: Runner,
                                             request_queries: list[tuple[str, str]],
                                             tmp_path: Path) -> None:
    names = [f"gpu-{i:02d}" for i in range(27)]
    for name in names:
        cluster.store.create("nodes", gpu_node(name))
    plan = _plan(runner, cluster, tmp_path, "cordon", names)
    assert len(plan.changes) == 27
    request_queries.clear()
    told: list[tuple[int, int]] = []
    dry = runner.dry_run(plan, lambda done, total: told.append((done, total)))
    sent = _dry(request_queries, "PATCH")
    assert sorted(sent) == sorted(f"/api/v1/nodes/{name}" for name in names)
    assert dry.ok and (dry.checked, dry.total) == (27, 27)
    assert told == [(n, 27) for n in range(1, 28)]
    assert dry.summary() == "passed (27 of 27 writes checked)"
    assert all("unschedulable" not in (cluster.store.get("nodes", n, None)["spec"] or {})
               for n in names)  # nothing stored by a dry run


def test_a_dry_run_stopped_half_way_is_incomplete_and_sends_no_more(
        cluster: EmulatedCluster, runner: Runner, request_queries: list[tuple[str, str]],
        tmp_path: Path) -> None:
    """The dialog closed (its stop event set) while a big plan was being checked."""
    names = [f"gpu-{i:02d}" for i in range(40)]
    for name in names:
        cluster.store.create("nodes", gpu_node(name))
    plan = _plan(runner, cluster, tmp_path, "cordon", names)
    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        if done >= 5:
            stop.set()

    request_queries.clear()
    dry = runner.dry_run(plan, progress, stop)
    sent = len(_dry(request_queries))
    assert 5 <= sent < 40  # the ones already in flight may land, no new one starts
    assert not dry.ok and dry.verdict == "incomplete"
    assert dry.checked == sent and "not sent: the dry run was stopped" in dry.summary()


def test_a_refusal_in_the_last_write_refuses_the_plan(cluster: EmulatedCluster,
                                                      runner: Runner,
                                                      tmp_path: Path) -> None:
    """Before, only the first 20 writes were checked: a bad 21st passed unseen."""
    names = [f"gpu-{i:02d}" for i in range(21)]
    for name in names:
        cluster.store.create("nodes", gpu_node(name))
    plan = _plan(runner, cluster, tmp_path, "cordon", names)
    cluster.store.delete("nodes", names[-1], None)  # the last write now meets a 404
    dry = runner.dry_run(plan)
    assert not dry.ok and dry.refusal and names[-1] in dry.refusal
    assert dry.summary().startswith("refused: ")


def test_no_changes_is_never_passed_and_is_not_applied(
        cluster: EmulatedCluster, runner: Runner, request_queries: list[tuple[str, str]],
        tmp_path: Path) -> None:
    cluster.store.create("nodes", gpu_node("gpu-1"))
    empty = Plan("cordon", "Cordon gpu-1", ("gpu-1",))
    request_queries.clear()
    dry = runner.dry_run(empty)
    assert not dry.ok and dry.nothing and "passed" not in dry.summary()
    assert dry.summary() == "nothing to change"
    result = runner.apply(action("cordon"), empty, dry, lambda p: None, threading.Event())
    assert not result.ok
    assert not [r for r in request_queries if r[0] != "GET"]
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    (audit,) = [line for line in lines if line["phase"] == "intent"]
    assert audit["dry_run"] == "nothing to change"


def test_a_write_the_server_cannot_dry_run_is_named_and_blocks_the_plan(
        cluster: EmulatedCluster, runner: Runner, tmp_path: Path) -> None:
    cluster.store.create("nodes", gpu_node("gpu-1"))
    odd = Change("delete", "Node", "gpu-1", None, kubectl="kubectl delete node gpu-1",
                 summary="delete the node")
    plan = Plan("cordon", "Odd", ("gpu-1",), (odd,))
    dry = runner.dry_run(plan)
    assert not dry.ok and dry.refusal is None
    assert dry.summary().startswith("incomplete (0 of 1 write checked); not checked: ")
    assert "cannot dry-run a 'delete' write" in dry.summary()
    result = runner.apply(action("cordon"), plan, dry, lambda p: None, threading.Event())
    assert not result.ok and cluster.store.get("nodes", "gpu-1", None) is not None


# ------------------------------------------------------------------ the drain's pods
def test_the_drain_plan_lists_every_pod_it_evicts_and_the_apply_evicts_exactly_those(
        cluster: EmulatedCluster, runner: Runner, request_queries: list[tuple[str, str]],
        tmp_path: Path) -> None:
    _drain_node(cluster)
    plan = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"], {"timeout": 10})
    planned = _planned_evictions(plan)
    assert sorted(planned) == ["gpu-operator/nvidia-cuda-validator-abcde",
                               "ml-training/llm-pretrain-7b-0"]
    assert "  skip gpu-operator/nvidia-driver-x (DaemonSet)" in plan.impact
    assert "  skip kube-system/static-x (mirror pod)" in plan.impact
    assert "  evict gpu-operator/nvidia-cuda-validator-abcde (completed)" in plan.impact
    request_queries.clear()
    dry = runner.dry_run(plan)
    assert dry.ok and (dry.checked, dry.total) == (3, 3), dry
    assert sorted(_dry(request_queries, "POST")) == sorted(
        f"/api/v1/namespaces/{p.split('/')[0]}/pods/{p.split('/')[1]}/eviction"
        for p in planned)
    request_queries.clear()
    result = _apply(runner, plan)
    assert result.ok, result
    assert sorted(_evictions_sent(request_queries)) == sorted(planned)
    intent, outcome = (json.loads(line)
                       for line in (tmp_path / "audit.jsonl").read_text().splitlines())
    assert sorted(f"{c.get('namespace')}/{c['name']}" for c in intent["change"]
                  if c["verb"] == "create") == sorted(planned)
    assert sorted(f"{d.get('namespace')}/{d['name']}" for d in outcome["done"]
                  if d["verb"] == "create") == sorted(planned)
    assert cluster.store.get("pods", "nvidia-driver-x", "gpu-operator") is not None


def test_an_emptydir_pod_is_refused_before_y_with_the_option_that_allows_it(
        cluster: EmulatedCluster, runner: Runner, request_queries: list[tuple[str, str]],
        tmp_path: Path) -> None:
    _drain_node(cluster, empty_dir=True)
    plan = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"], {"timeout": 10})
    assert not _planned_evictions(plan)  # the apply would cordon and stop
    assert ("  refused ml-training/scratch-0: emptyDir; allowed by --delete-emptydir-data"
            in plan.impact)
    assert plan.warnings[0].startswith("the drain will cordon gpu-1 and then stop")
    assert "'also delete emptyDir data' (--delete-emptydir-data)" in plan.warnings[0]
    dry = runner.dry_run(plan)
    assert dry.ok and dry.total == 1  # the cordon: all it will send
    request_queries.clear()
    result = _apply(runner, plan)
    assert not result.ok and "cordoned, not drained" in result.summary
    assert not _evictions_sent(request_queries)

    cluster.store.mutate("nodes", "gpu-1", None,
                         lambda obj: obj["spec"].pop("unschedulable", None), manager="t")
    allowed = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"],
                    {"options": EMPTYDIR, "timeout": 10})
    assert "ml-training/scratch-0" in _planned_evictions(allowed)
    assert not any("will cordon" in line for line in allowed.warnings)
    request_queries.clear()
    result = _apply(runner, allowed)
    assert result.ok, result
    assert sorted(_evictions_sent(request_queries)) == sorted(_planned_evictions(allowed))
    assert cluster.store.get("pods", "scratch-0", "ml-training") is None


def test_an_unmanaged_pod_is_refused_unless_forced(cluster: EmulatedCluster, runner: Runner,
                                                   tmp_path: Path) -> None:
    _drain_node(cluster, bare=True)
    plan = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"], {"timeout": 10})
    assert ("  refused ml-training/debug-shell: no controller; allowed by --force"
            in plan.impact)
    assert "(--force) would allow it" in plan.warnings[0]
    forced = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"],
                   {"options": FORCE, "timeout": 10})
    assert "ml-training/debug-shell" in _planned_evictions(forced)
    assert _apply(runner, forced).ok
    assert cluster.store.get("pods", "debug-shell", "ml-training") is None


def test_a_budget_held_pod_shows_refused_now_by_its_budget(
        cluster: EmulatedCluster, runner: Runner, tmp_path: Path) -> None:
    _drain_node(cluster)
    cluster.store.create("poddisruptionbudgets.policy",
                         budget("trainer-pdb", namespace="ml-training"))
    plan = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"], {"timeout": 10})
    dry = runner.dry_run(plan)
    assert dry.ok and len(dry.held) == 1
    assert ("evict ml-training/llm-pretrain-7b-0: refused now by PodDisruptionBudget "
            "trainer-pdb") in dry.held[0]


def test_a_pod_that_arrives_after_the_plan_is_not_evicted(
        cluster: EmulatedCluster, runner: Runner, request_queries: list[tuple[str, str]],
        tmp_path: Path) -> None:
    _drain_node(cluster)
    plan = _plan(runner, cluster, tmp_path, "drain", ["gpu-1"], {"timeout": 10})
    dry = runner.dry_run(plan)
    cluster.store.create("pods", gpu_pod("late-0", "gpu-1", namespace="ml-training"))
    request_queries.clear()
    result = runner.apply(action("drain"), plan, dry, lambda p: None, threading.Event())
    assert not result.ok and result.conflict  # the UI re-plans from the server
    assert result.error and "ml-training/late-0" in result.error
    assert not [r for r in request_queries if r[0] != "GET"]  # not even the cordon
    assert cluster.store.get("pods", "late-0", "ml-training") is not None


def test_a_drain_plan_made_without_the_server_is_not_applied(cluster: EmulatedCluster,
                                                            tmp_path: Path) -> None:
    """The pure plan (no server list) names no eviction: the apply refuses it, sends nothing."""
    _drain_node(cluster)
    writer: KubeWriter = writer_for(cluster, tmp_path)
    try:
        drain = action("drain")
        plan = drain.plan(snapshot_of(cluster, tmp_path), ["gpu-1"], {"timeout": 10})
        result = drain.apply(plan, writer, lambda p: None, threading.Event())
        assert not result.ok and result.error and "re-plan" in result.error
        assert "unschedulable" not in (cluster.store.get("nodes", "gpu-1", None)["spec"] or {})
    finally:
        writer.close()


# ------------------------------------------------------------------ the upgrade's drain
def _drain_settings(**overrides: str) -> dict[str, str]:
    return {"enable": "true", "force": "false", "podSelector": "", "deleteEmptyDir": "false",
            "timeoutSeconds": "300", **overrides}


def test_upgrade_drain_settings_name_the_pods_the_operators_drain_would_refuse(
        cluster: EmulatedCluster, runner: Runner, tmp_path: Path) -> None:
    """The operator drains with kubectl's rules: with force and deleteEmptyDir off, the
    emptyDir and unmanaged pods on the node about to be drained stop its upgrade; the plan
    says so before y (a pod labelled drain.skip is left out, as the operator leaves it)."""
    seed_cluster_policy(cluster.store)
    state = "nvidia.com/gpu-driver-upgrade-state"
    cluster.store.create("nodes", gpu_node("gpu-1", **{state: "drain-required"}))
    cluster.store.create("nodes", gpu_node("gpu-2", **{state: "upgrade-done"}))
    cluster.store.create("pods", gpu_pod("scratch-0", "gpu-1", owner=("StatefulSet", "s"),
                                         empty_dir=True))
    cluster.store.create("pods", pod("debug-shell", "gpu-1", namespace="ml"))
    cluster.store.create("pods", pod("kept", "gpu-1", namespace="ml", labels={
        "nvidia.com/gpu-driver-upgrade-drain.skip": "true"}))
    cluster.store.create("pods", pod("elsewhere", "gpu-2", namespace="ml"))
    plan = _plan(runner, cluster, tmp_path, "upgrade-drain", [], _drain_settings())
    assert not plan.blocked, plan.blocked
    (stop,) = [w for w in plan.warnings if "would stop" in w]
    assert stop.startswith("the upgrade's drain of gpu-1 would stop with these settings")
    assert "ml/scratch-0: emptyDir; deleteEmptyDir true allows it" in stop
    assert "ml/debug-shell: no controller; force true allows it" in stop
    assert "ml/kept" not in stop and "elsewhere" not in stop
    assert any("on 1 node on their way to a drain (of 1): 1 would stop the drain" in line
               for line in plan.impact)
    allowed = _plan(runner, cluster, tmp_path, "upgrade-drain", [],
                    _drain_settings(force="true", deleteEmptyDir="true"))
    assert not [w for w in allowed.warnings if "would stop" in w]
    assert any("none would be refused" in line for line in allowed.impact)
    assert runner.dry_run(allowed).summary() == "passed (1 of 1 write checked)"
