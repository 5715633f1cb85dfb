"""kubectl twin check: a node after gputui's cordon, label and drain equals its twin after
``kubectl cordon``, ``kubectl label`` and ``kubectl drain --ignore-daemonsets`` (with each
kubectl the suite runs: Debian's 1.20 and 1.35)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.audit import AuditLog
from gputui.actions.base import Plan
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import driver_daemonset, gpu_node, gpu_pod, snapshot_of
from tests.apiserver.conftest import KubectlRun, kubectl, pod  # noqa: F401 - fixture

pytestmark = pytest.mark.kubectl


def _seed_twin(cluster: EmulatedCluster, node: str) -> None:
    """The same workload on ``node``: a trainer, a DaemonSet pod, a mirror pod, a finished
    unmanaged pod (kubectl evicts finished pods whatever else holds)."""
    store = cluster.store
    driver_daemonset(store)
    store.create("nodes", gpu_node(node))
    store.create("pods", gpu_pod(f"{node}-train", node))
    store.create("pods", gpu_pod(f"{node}-infer", node, owner=("StatefulSet", "infer"),
                                 labels={"app": "infer"}, gpus=1))
    store.create("pods", pod(f"{node}-driver", node, namespace="gpu-operator",
                             owner=("DaemonSet", "nvidia-driver-daemonset")))
    store.create("pods", pod(f"{node}-static", node, namespace="kube-system"))
    store.mutate("pods", f"{node}-static", "kube-system", lambda obj: obj["metadata"].update(
        annotations={"kubernetes.io/config.mirror": "hash"}), manager="kubelet")
    finished = pod(f"{node}-done", node)
    finished["status"]["phase"] = "Succeeded"
    store.create("pods", finished)


def _shape(cluster: EmulatedCluster, node: str) -> dict[str, Any]:
    """What must match: spec, labels and taints of the node, and the pods left on it."""
    stored = cluster.store.get("nodes", node, None)
    labels = {k: v for k, v in stored["metadata"]["labels"].items()
              if k != "kubernetes.io/hostname"}
    pods = sorted((p["metadata"]["namespace"], p["metadata"]["name"].removeprefix(f"{node}-"))
                  for p in cluster.store.list("pods")[0]
                  if (p.get("spec") or {}).get("nodeName") == node)
    spec = dict(stored["spec"])
    return {"spec": spec, "labels": labels, "taints": spec.get("taints"), "pods": pods}


def _gputui(runner: Runner, cluster: EmulatedCluster, tmp_path: Path, action_id: str,
            node: str, params: dict[str, Any] | None = None) -> None:
    act = action(action_id)
    plan = runner.plan(act, snapshot_of(cluster, tmp_path), [node], params or {})
    result = runner.apply(act, plan, runner.dry_run(plan), lambda p: None, threading.Event())
    assert result.ok, result


def test_gputui_node_equals_its_kubectl_twin(server: EmulatedCluster, writer: KubeWriter,
                                             kubectl: KubectlRun,  # noqa: F811
                                             tmp_path: Path) -> None:
    _seed_twin(server, "twin-a")
    _seed_twin(server, "twin-b")
    runner = Runner(writer, AuditLog(tmp_path / "audit.jsonl"))
    runner.check_permissions()
    assert _shape(server, "twin-a") == _shape(server, "twin-b")

    _gputui(runner, server, tmp_path, "cordon", "twin-a")
    kubectl("cordon", "twin-b")
    assert _shape(server, "twin-a") == _shape(server, "twin-b")

    _gputui(runner, server, tmp_path, "operands_off", "twin-a")
    kubectl("label", "node", "twin-b", "nvidia.com/gpu.deploy.operands=false")
    assert _shape(server, "twin-a") == _shape(server, "twin-b")

    _gputui(runner, server, tmp_path, "drain", "twin-a", {"timeout": 20})
    kubectl("drain", "twin-b", "--ignore-daemonsets", "--timeout=20s")
    after = _shape(server, "twin-a")
    assert after == _shape(server, "twin-b")
    assert after["spec"]["unschedulable"] is True
    assert after["labels"]["nvidia.com/gpu.deploy.operands"] == "false"
    assert after["pods"] == [("gpu-operator", "driver"), ("kube-system", "static")]

    _gputui(runner, server, tmp_path, "uncordon", "twin-a")
    kubectl("uncordon", "twin-b")
    assert _shape(server, "twin-a") == _shape(server, "twin-b")


def _kubectl_sorting(output: str) -> dict[str, set[str]]:
    """What ``kubectl drain --dry-run=server`` said of the pods: evicted (``evicting pod``)
    and refused, by reason (its ``cannot delete ... (use --flag to override): pods`` lines:
    ``--delete-emptydir-data`` for emptyDir data, ``--force`` for the rest)."""
    said: dict[str, set[str]] = {"evict": set(), "emptyDir": set(), "force": set()}
    for line in output.splitlines():
        if line.startswith("evicting pod "):
            said["evict"].add(line.removeprefix("evicting pod ").split(" ")[0])
        elif line.startswith("cannot delete ") and "to override): " in line:
            reason = "emptyDir" if "--delete-emptydir-data" in line else "force"
            said[reason].update(p.strip() for p in line.split("): ", 1)[1].split(","))
    return said


def _refused(plan: Plan, reason: str) -> set[str]:
    """The pods the plan's lines say are refused for ``reason`` (``emptyDir`` or not)."""
    lines = [line.split()[1].rstrip(":") for line in plan.impact
             if line.startswith("  refused ") and ("emptyDir;" in line) == (reason == "emptyDir")]
    return set(lines)


@pytest.mark.parametrize(("options", "flags"), [
    ("skip DaemonSet pods only", ()),
    ("also delete emptyDir data and force unmanaged pods",
     ("--delete-emptydir-data", "--force"))])
def test_the_drain_plan_sorts_pods_as_kubectl_drain_dry_run_does(
        server: EmulatedCluster, writer: KubeWriter, kubectl: KubectlRun,  # noqa: F811
        tmp_path: Path, options: str, flags: tuple[str, ...]) -> None:
    """The plan's evicted, skipped and refused pods are those ``kubectl drain
    --dry-run=server`` evicts, leaves and refuses, with kubectl's defaults and both switches."""
    if kubectl.version < (1, 35):
        pytest.skip("kubectl 1.20 asks the OpenAPI document whether Pod evictions take a "
                    "dry run, which the emulator's does not say")
    _seed_twin(server, "twin-a")
    server.store.create("pods", gpu_pod("twin-a-scratch", "twin-a", owner=("StatefulSet", "s"),
                                        empty_dir=True, labels={"app": "s"}))
    server.store.create("pods", pod("twin-a-bare", "twin-a", namespace="ml"))
    # no controller and emptyDir data: kubectl names the emptyDir first (its filter order)
    server.store.create("pods", pod("twin-a-bare-scratch", "twin-a", namespace="ml",
                                    empty_dir=True))
    finished = pod("twin-a-ds-done", "twin-a", namespace="gpu-operator",
                   owner=("DaemonSet", "nvidia-driver-daemonset"))
    finished["status"]["phase"] = "Failed"  # a finished DaemonSet pod is evicted
    server.store.create("pods", finished)
    runner = Runner(writer, AuditLog(tmp_path / "audit.jsonl"))
    runner.check_permissions()
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["twin-a"],
                       {"options": options, "timeout": 20})
    record = plan.params["pods"]["twin-a"]
    skipped = {line.split()[1] for line in plan.impact if line.startswith("  skip ")}
    ran = kubectl("drain", "twin-a", "--ignore-daemonsets", "--dry-run=server", *flags,
                  "--timeout=20s", check=False)
    said = _kubectl_sorting(ran.stdout + ran.stderr)
    assert _refused(plan, "emptyDir") == said["emptyDir"], ran.stderr
    assert _refused(plan, "force") == said["force"], ran.stderr
    assert set(record["refused"]) == said["emptyDir"] | said["force"]
    planned = {f"{c.namespace}/{c.name}" for c in plan.changes if c.verb == "create"}
    if record["refused"]:
        assert ran.returncode != 0 and not said["evict"] and not planned
    else:
        assert ran.returncode == 0, ran.stderr
        assert set(record["evict"]) == said["evict"] == planned
        on_node = {f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                   for p in server.store.list("pods")[0] if p["spec"].get("nodeName") == "twin-a"}
        assert skipped == on_node - said["evict"] == {"gpu-operator/twin-a-driver",
                                                      "kube-system/twin-a-static"}
    assert server.store.get("pods", "twin-a-scratch", "ml") is not None  # a dry run
