"""Cordon, uncordon, drain and labels: plans from a real snapshot, effects on stored objects,
dry runs, budgets, read-only and denied permissions, all through the real client."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gputui.actions.base import Progress, Risk
from gputui.actions.registry import ACTIONS, action
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
from tests.actions.helpers import runner_for
from tests.apiserver.conftest import pod


def _seed(cluster: EmulatedCluster) -> None:
    store = cluster.store
    driver_daemonset(store)
    for name in ("gpu-1", "gpu-2", "gpu-3"):
        store.create("nodes", gpu_node(name))
    store.create("pods", gpu_pod("train-0", "gpu-1"))
    store.create("pods", gpu_pod("infer-0", "gpu-1", owner=("ReplicaSet", "infer"),
                                 labels={"app": "infer"}, gpus=1))
    store.create("pods", pod("nvidia-driver-x", "gpu-1", namespace="gpu-operator",
                             owner=("DaemonSet", "nvidia-driver-daemonset")))
    store.create("pods", pod("static-x", "gpu-1", namespace="kube-system"))
    store.mutate("pods", "static-x", "kube-system", lambda obj: obj["metadata"].update(
        annotations={"kubernetes.io/config.mirror": "abc"}), manager="kubelet")


def _run(runner: Runner, action_id: str, cluster: EmulatedCluster, tmp_path: Path,
         targets: list[str], params: dict[str, object] | None = None,
         cancel: threading.Event | None = None) -> tuple[object, list[Progress]]:
    act = action(action_id)
    plan = runner.plan(act, snapshot_of(cluster, tmp_path), targets, params or {})
    seen: list[Progress] = []
    dry = runner.dry_run(plan)
    return runner.apply(act, plan, dry, seen.append, cancel or threading.Event()), seen


def test_cordon_plan_dry_run_apply_and_audit(server: EmulatedCluster, writer: KubeWriter,
                                             tmp_path: Path) -> None:
    _seed(server)
    runner = runner_for(writer, tmp_path)
    snapshot = snapshot_of(server, tmp_path)
    plan = runner.plan(action("cordon"), snapshot, ["gpu-1", "gpu-2"], {})
    assert plan.kubectl == ("kubectl cordon gpu-1", "kubectl cordon gpu-2")
    assert plan.changes[0].body == {"spec": {"unschedulable": True}}
    assert any("2 GPU pods left running" in line for line in plan.impact)
    assert any("ml/train-0 on gpu-1 (8 GPUs, app trainer)" in line for line in plan.impact)
    dry = runner.dry_run(plan)
    assert dry.ok and len(dry.lines) == 2
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]
    result = runner.apply(action("cordon"), plan, dry, lambda p: None, threading.Event())
    assert result.ok and result.summary == "cordoned gpu-1, gpu-2"
    assert server.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
    assert "unschedulable" not in server.store.get("nodes", "gpu-3", None)["spec"]
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the intent line and its outcome
    again = runner.plan(action("cordon"), snapshot_of(server, tmp_path), ["gpu-1"], {})
    assert again.blocked and "already cordoned" in again.blocked
    result, _ = _run(runner, "uncordon", server, tmp_path, ["gpu-1"])
    assert result.ok and server.store.get("nodes", "gpu-1", None)["spec"].get(
        "unschedulable") in (None, False)


def test_cordon_warns_on_last_schedulable_node_of_a_pool(server: EmulatedCluster,
                                                         writer: KubeWriter,
                                                         tmp_path: Path) -> None:
    server.store.create("nodes", gpu_node("h100-1", pool="h100"))
    server.store.create("nodes", gpu_node("a100-1"))
    server.store.create("nodes", gpu_node("a100-2"))
    plan = action("cordon").plan(snapshot_of(server, tmp_path), ["h100-1", "a100-1"], {})
    assert any("h100-1: the last schedulable node of pool h100" in w for w in plan.warnings)
    assert not any("a100" in w for w in plan.warnings)


def test_drain_evicts_by_kubectl_rules_and_reports_the_budget(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    server.store.create("poddisruptionbudgets.policy", budget("trainer-pdb"))
    runner = runner_for(writer, tmp_path)
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["gpu-1"],
                       {"timeout": 1.5})
    assert plan.risk is Risk.DESTRUCTIVE
    assert plan.kubectl[0] == "kubectl drain gpu-1 --ignore-daemonsets --timeout=1.5s"
    dry = runner.dry_run(plan)
    assert dry.ok
    assert any("ml/train-0: refused now by PodDisruptionBudget trainer-pdb" in line
               for line in dry.lines)
    assert server.store.get("pods", "train-0", "ml") is not None
    seen: list[Progress] = []
    result = runner.apply(action("drain"), plan, dry, seen.append, threading.Event())
    assert not result.ok and not result.cancelled
    assert result.summary.startswith("gpu-1 not drained: 1 pod still there after 1.5 s")
    assert "2 DaemonSet or mirror pods skipped" in result.summary
    assert result.error is not None and result.error.startswith(
        "ml/train-0: refused by PodDisruptionBudget trainer-pdb")
    store = server.store
    assert store.get("pods", "train-0", "ml") is not None  # never deleted
    assert store.get("pods", "infer-0", "ml") is None
    assert store.get("pods", "nvidia-driver-x", "gpu-operator") is not None
    assert store.get("pods", "static-x", "kube-system") is not None
    assert store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
    blocked = [p for p in seen if p.blocked]
    assert blocked and "trainer-pdb" in blocked[-1].blocked[0]
    assert seen[-1].message == "draining gpu-1: 1 pod left"


def test_drain_said_drained_only_when_pods_are_gone(server: EmulatedCluster,
                                                   writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    runner = runner_for(writer, tmp_path)
    result, seen = _run(runner, "drain", server, tmp_path, ["gpu-1"], {"timeout": 5})
    assert result.ok, result  # type: ignore[attr-defined]
    assert result.summary.startswith("drained gpu-1: 2 pods evicted and gone")  # type: ignore[attr-defined]
    assert seen[-1].done == seen[-1].total == 2
    left = {p["metadata"]["name"] for p in writer.list_pods_on_node("gpu-1")}
    assert left == {"nvidia-driver-x", "static-x"}


@pytest.mark.parametrize(("options", "drained"), [
    ("skip DaemonSet pods only", False),
    ("also force unmanaged pods", False),
    ("also delete emptyDir data and force unmanaged pods", True)])
def test_drain_refuses_unmanaged_and_emptydir_pods_unless_ticked(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path, options: str,
        drained: bool) -> None:
    server.store.create("nodes", gpu_node("gpu-1"))
    server.store.create("pods", gpu_pod("bare", "gpu-1", owner=None))
    server.store.create("pods", gpu_pod("scratch", "gpu-1", empty_dir=True))
    runner = runner_for(writer, tmp_path)
    result, _ = _run(runner, "drain", server, tmp_path, ["gpu-1"],
                     {"options": options, "timeout": 3})
    assert result.ok is drained  # type: ignore[attr-defined]
    if not drained:
        assert "nothing was evicted" in result.summary  # type: ignore[attr-defined]
        assert server.store.get("pods", "scratch", "ml") is not None
        assert server.store.get("pods", "bare", "ml") is not None
        error = result.error or ""  # type: ignore[attr-defined]
        if "force" in options:
            assert "emptyDir" in error and "ml/scratch" in error and "ml/bare" not in error
        else:
            assert "ml/bare" in error and "--force allows them" in error


def test_drain_refuses_a_pod_whose_daemonset_is_gone_unless_forced(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    server.store.create("nodes", gpu_node("gpu-1"))
    server.store.create("pods", pod("orphan", "gpu-1", namespace="gpu-operator",
                                    owner=("DaemonSet", "removed-daemonset")))
    runner = runner_for(writer, tmp_path)
    result, _ = _run(runner, "drain", server, tmp_path, ["gpu-1"], {"timeout": 3})
    assert not result.ok  # type: ignore[attr-defined]
    assert "DaemonSet is gone (--force allows them): gpu-operator/orphan" in (
        result.error or "")  # type: ignore[attr-defined]
    result, _ = _run(runner, "drain", server, tmp_path, ["gpu-1"],
                     {"timeout": 3, "options": "also force unmanaged pods"})
    assert result.ok and server.store.get("pods", "orphan", "gpu-operator") is None  # type: ignore[attr-defined]


def test_drain_cancel_stops_and_says_what_was_evicted(server: EmulatedCluster,
                                                     writer: KubeWriter,
                                                     tmp_path: Path) -> None:
    _seed(server)
    server.store.create("poddisruptionbudgets.policy", budget("trainer-pdb"))
    cancel = threading.Event()
    runner = runner_for(writer, tmp_path)

    def stop_when_blocked(progress: Progress) -> None:
        if progress.blocked:
            cancel.set()

    act = action("drain")
    plan = runner.plan(act, snapshot_of(server, tmp_path), ["gpu-1"], {"timeout": 60})
    result = runner.apply(act, plan, runner.dry_run(plan), stop_when_blocked, cancel)
    assert result.cancelled and not result.ok
    assert result.summary.startswith("drain of gpu-1 stopped: evicted ml/infer-0; 1 pod left")
    assert server.store.get("pods", "train-0", "ml") is not None
    # the cordon stays: the outcome says so, names the node and the key that undoes it
    # (before, a stopped drain left the node cordoned without a word)
    assert server.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
    assert result.summary.endswith("; gpu-1 stays cordoned (uncordon: u)")
    assert result.cordoned == ("gpu-1",)


def test_label_actions_validate_and_patch(server: EmulatedCluster, writer: KubeWriter,
                                          tmp_path: Path) -> None:
    _seed(server)
    server.store.create("configmaps", {
        "metadata": {"name": "time-slicing-config", "namespace": "gpu-operator"},
        "data": {"a100-ts4": "version: v1", "default": "version: v1"}})
    runner = runner_for(writer, tmp_path)
    result, _ = _run(runner, "operands_off", server, tmp_path, ["gpu-2"])
    assert result.ok  # type: ignore[attr-defined]
    labels = server.store.get("nodes", "gpu-2", None)["metadata"]["labels"]
    assert labels["nvidia.com/gpu.deploy.operands"] == "false"
    result, _ = _run(runner, "operands_on", server, tmp_path, ["gpu-2"])
    labels = server.store.get("nodes", "gpu-2", None)["metadata"]["labels"]
    assert "nvidia.com/gpu.deploy.operands" not in labels
    plan = action("driver_off").plan(snapshot_of(server, tmp_path), ["gpu-1"], {})
    assert plan.kubectl == (
        "kubectl label node gpu-1 nvidia.com/gpu.deploy.driver=false --overwrite",)
    assert any("ml/train-0" in line for line in plan.impact)
    bad = action("deploy_label").plan(snapshot_of(server, tmp_path), ["gpu-1"],
                                      {"operand": "dcgm exporter", "value": "false"})
    assert bad.blocked and "label key" in bad.blocked and not bad.changes
    bad_value = action("deploy_label").plan(snapshot_of(server, tmp_path), ["gpu-1"],
                                            {"operand": "dcgm", "value": "no way"})
    assert bad_value.blocked and "label value" in bad_value.blocked
    result, _ = _run(runner, "deploy_label", server, tmp_path, ["gpu-1"],
                     {"operand": "dcgm-exporter", "value": "false"})
    labels = server.store.get("nodes", "gpu-1", None)["metadata"]["labels"]
    assert labels["nvidia.com/gpu.deploy.dcgm-exporter"] == "false"


def test_sharing_config_comes_from_the_device_plugin_configmap(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    store = server.store
    store.create("nodes", gpu_node("gpu-1"))
    store.create("clusterpolicies.nvidia.com", {
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {"devicePlugin": {"config": {"name": "time-slicing-config",
                                             "default": "any"}}},
        "status": {"state": "ready", "namespace": "gpu-operator"}})
    store.create("configmaps", {
        "metadata": {"name": "time-slicing-config", "namespace": "gpu-operator"},
        "data": {"a100-ts4": "version: v1", "any": "version: v1"}})
    snapshot = snapshot_of(server, tmp_path)
    spec = action("sharing_config").params[0]
    assert spec.choices is not None
    assert spec.choices(snapshot, ["gpu-1"]) == ("a100-ts4", "any", "(unset)")
    refused = action("sharing_config").plan(snapshot, ["gpu-1"], {"value": "a100-ts8"})
    assert refused.blocked and "not offered" in refused.blocked
    runner = runner_for(writer, tmp_path)
    result, _ = _run(runner, "sharing_config", server, tmp_path, ["gpu-1"],
                     {"value": "a100-ts4"})
    assert result.ok  # type: ignore[attr-defined]
    labels = store.get("nodes", "gpu-1", None)["metadata"]["labels"]
    assert labels["nvidia.com/device-plugin.config"] == "a100-ts4"


def test_denied_permissions_grey_the_actions_and_nothing_is_sent(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    server.set_deny("create:pods/eviction")
    runner = runner_for(writer, tmp_path)
    assert runner.blocked(action("cordon")) is None
    why = runner.blocked(action("drain"))
    assert why is not None and why.startswith("denied: create pods/eviction")
    result, _ = _run(runner, "drain", server, tmp_path, ["gpu-1"])
    assert not result.ok and result.error == why  # type: ignore[attr-defined]
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]
    server.set_deny("patch:nodes")  # denied after the check: the dry run meets the 403
    plan = runner.plan(action("cordon"), snapshot_of(server, tmp_path), ["gpu-1"], {})
    dry = runner.dry_run(plan)
    assert not dry.ok and dry.refusal is not None and "is forbidden" in dry.refusal
    result = runner.apply(action("cordon"), plan, dry, lambda p: None, threading.Event())
    assert not result.ok and "unschedulable" not in server.store.get(
        "nodes", "gpu-1", None)["spec"]


def test_read_only_greys_every_action_and_sends_only_gets(
        server: EmulatedCluster, request_log: list[tuple[str, str]], tmp_path: Path) -> None:
    _seed(server)
    read_only = writer_for(server, tmp_path, read_only=True)
    runner = runner_for(read_only, tmp_path)
    snapshot = snapshot_of(server, tmp_path)
    for act in ACTIONS:
        assert runner.blocked(act) is not None and "read-only" in (runner.blocked(act) or "")
        plan = runner.plan(act, snapshot, ["gpu-1"], {"operand": "dcgm", "value": "false"})
        result = runner.apply(act, plan, runner.dry_run(plan), lambda p: None,
                              threading.Event())
        assert not result.ok
    assert {method for method, _ in request_log} == {"GET"}
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]
