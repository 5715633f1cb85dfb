"""End to end: from gputui's action, a new driver version rolls over a cluster running long
jobs protected by a PodDisruptionBudget and a waitForCompletion selector.

The version is set through the Runner (permissions, dry run, apply, audit) as the app does.
A recorder on the store's watch notes every job pod's phase and its deletion; the emulated
clock runs fast until every node is upgrade-done on the new driver. The claim checked: no
trainer pod (the budget's pods, the ones the policy waits for) is deleted while still
running; every node ends upgrade-done, uncordoned, on the new version.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from gputui.actions.audit import AuditLog
from gputui.actions.runner import Runner
from gputui.actions.upgrade_policy import SetDriverVersion
from gputui.sim.store import WatchEvent
from tests.actions.upgrade.helpers import Cluster

SCENARIO = """summary: four H100 nodes, trainers behind a budget, evals without one
clusterPolicy:
  spec:
    driver:
      upgradePolicy:
        autoUpgrade: true
        maxParallelUpgrades: 2
        maxUnavailable: 50%
        waitForCompletion: {podSelector: app=trainer, timeoutSeconds: 0}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-7f3a, count: 4, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer-llama, namespace: ml-training, pool: h100, count: 2, gpus: 8,
     labels: {app: trainer}, runSeconds: 3h, startedAgo: 1h, pdb: true}
  - {name: batch-eval, namespace: ml-training, pool: h100, count: 2, gpus: 4,
     labels: {app: eval}, runSeconds: 20h}
"""


def _driver_tags(cluster: Cluster, node: str) -> list[str]:
    pods = cluster.sim.core.list_pod_for_all_namespaces(
        field_selector=f"spec.nodeName={node}", label_selector="app=nvidia-driver-daemonset")
    return [p.spec.containers[0].image.rsplit(":", 1)[-1] for p in pods.items]


def test_new_driver_rolls_everywhere_without_killing_a_protected_job(
        start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "e2e.yaml"
    path.write_text(SCENARIO)
    cluster = Cluster(start_sim(str(path), speed=1000), tmp_path)
    nodes = cluster.sim.operator.world.pool_members["h100"]
    cluster.sim.wait_for(lambda: all(cluster.state(n) == "upgrade-done" for n in nodes), 600,
                         "converged")
    phases: dict[str, str] = {}
    killed_running: list[str] = []
    deleted: list[str] = []

    def record(event: WatchEvent) -> None:
        meta = event.obj["metadata"]
        if meta.get("namespace") != "ml-training":
            return
        if event.type == "DELETED":
            deleted.append(meta["name"])
            if meta["labels"].get("app") == "trainer" and phases.get(meta["name"]) != "Succeeded":
                killed_running.append(f"{meta['name']} ({phases.get(meta['name'])})")
        else:
            phases[meta["name"]] = event.obj["status"].get("phase", "")

    cluster.sim.cluster.store.watch("pods", record)
    trainers = {p.metadata.name for p in cluster.sim.core.list_namespaced_pod(
        "ml-training", label_selector="app=trainer").items}
    runner = Runner(cluster.writer, AuditLog(tmp_path / "audit.jsonl"))
    runner.check_permissions()
    action = SetDriverVersion()
    plan = runner.plan(action, cluster.snapshot(), [], {"version": "580.82.07"})
    dry = runner.dry_run(plan)
    assert dry.ok, dry.refusal
    result = runner.apply(action, plan, dry, lambda _: None, threading.Event())
    assert result.ok, result.error
    cluster.sim.wait_for(lambda: all(cluster.state(n) == "upgrade-done"
                                     and _driver_tags(cluster, n) == ["580.82.07-ubuntu22.04"]
                                     for n in nodes), 12 * 3600, "every node upgraded")
    assert killed_running == []
    # the trainers ran to completion: every one of them is Succeeded (none was replaced)
    assert all(phases.get(name) == "Succeeded" for name in trainers), phases
    assert not any(cluster.sim.core.read_node(n).spec.unschedulable for n in nodes)
    # the eval jobs had no budget and were not waited for: they were evicted and replaced
    assert any(name.startswith("batch-eval-") for name in deleted)
    line, closing = (tmp_path / "audit.jsonl").read_text().splitlines()
    audit, outcome = json.loads(line), json.loads(closing)
    assert audit["action"] == "upgrade-driver-version" and outcome["error"] is None
    assert audit["change"] and "580.82.07" in line and outcome["id"] == audit["id"]
