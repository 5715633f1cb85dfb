"""MIG actions on the emulated cluster: the safe path end to end (journey 5), its failure
report with the MIG manager's log, cancel, and the label-only action's warnings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Progress, Risk
from gputui.actions.mig import SafeMigChange, SetMigConfig, offered
from gputui.sim.store import WatchEvent
from tests.actions.conftest import gpu_pod
from tests.actions.upgrade.helpers import Cluster, apply, plan_of

CONFIG = "nvidia.com/mig.config"
STATE = "nvidia.com/mig.config.state"
SCENARIO = """summary: two A100 nodes under the mixed strategy, one short inference job
clusterPolicy:
  spec:
    mig: {strategy: mixed}
nodePools:
  - {name: a100, prefix: gke-test-a100-pool-2b9c, count: 2, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
workloads:
  - {name: inference-bert, namespace: ml-serving, pool: a100, count: 1, gpus: 1,
     labels: {app: inference}, runSeconds: RUN}
timeline: TIMELINE
"""


@pytest.fixture
def start(start_sim: Any, tmp_path: Path) -> Any:
    def run(timeline: str = "[]", job: str = "4m") -> Cluster:
        path = tmp_path / "mig.yaml"
        path.write_text(SCENARIO.replace("TIMELINE", timeline).replace("RUN", job))
        cluster = Cluster(start_sim(str(path), speed=100), tmp_path)
        cluster.sim.wait_for(lambda: _busy_node(cluster), 600, "the inference pod running")
        return cluster
    return run


def _busy_node(cluster: Cluster) -> str | None:
    for pod in cluster.sim.core.list_namespaced_pod("ml-serving").items:
        if pod.status.phase == "Running":
            return str(pod.spec.node_name)
    return None


def _safe(poll: float = 0.05) -> SafeMigChange:
    action = SafeMigChange()
    action.poll_seconds = poll
    action.apply_timeout = 60.0
    return action


def _record(cluster: Cluster, node: str) -> list[str]:
    """The order of what happened on the node: cordon, GPU pod finished, config set, state."""
    seen: list[str] = []
    last: dict[str, str] = {}

    def on_node(event: WatchEvent) -> None:
        obj = event.obj
        if obj["metadata"]["name"] != node:
            return
        labels = obj["metadata"].get("labels") or {}
        for key, value in (("unschedulable", str(bool(obj["spec"].get("unschedulable")))),
                           ("config", str(labels.get(CONFIG))), ("state", str(labels.get(STATE)))):
            if last.get(key) != value:
                last[key] = value
                seen.append(f"{key}={value}")

    def on_pod(event: WatchEvent) -> None:
        obj = event.obj
        if obj["spec"].get("nodeName") == node and obj["metadata"]["namespace"] == "ml-serving":
            seen.append(f"pod={obj['status'].get('phase')}")

    store = cluster.sim.cluster.store
    store.watch("nodes", on_node)
    store.watch("pods", on_pod)
    return seen


def test_safe_path_waits_for_the_job_then_applies_and_uncordons(start: Any) -> None:
    cluster = start()
    node = _busy_node(cluster)
    snapshot = cluster.snapshot()
    assert "all-1g.10gb" in offered(snapshot, [node])
    action = _safe()
    assert action.params[0].choices is not None
    assert action.params[0].choices(snapshot, [node]) == offered(snapshot, [node])
    plan = action.plan(snapshot, [node], {"config": "all-1g.10gb", "gpu_pods": "wait"})
    assert plan.risk is Risk.DESTRUCTIVE and plan.blocked is None
    assert any("inference-bert-" in step for step in plan.steps)
    assert any(line.startswith("1 node made unavailable: 1 of 2 unavailable, maxUnavailable 1")
               for line in plan.impact)
    assert [c.kubectl for c in plan.changes] == [
        f"kubectl cordon {node}",
        f"kubectl label node {node} {CONFIG}=all-1g.10gb {STATE}- --overwrite",
        f"kubectl uncordon {node}"]
    order = _record(cluster, node)
    result, progress = apply(action, plan, cluster)
    assert result.ok, (result.summary, result.error)
    labels = cluster.labels(node)
    assert labels[CONFIG] == "all-1g.10gb" and labels[STATE] == "success"
    assert not cluster.sim.core.read_node(node).spec.unschedulable
    capacity = cluster.sim.core.read_node(node).status.capacity
    cluster.sim.wait_for(lambda: "nvidia.com/mig-1g.10gb" in
                         cluster.sim.core.read_node(node).status.capacity, 600, "MIG slices")
    cordon = order.index("unschedulable=True")
    finished = order.index("pod=Succeeded")
    configured = order.index("config=all-1g.10gb")
    success = order.index("state=success", configured)
    assert cordon < finished < configured < order.index("state=pending") < success
    assert order.index("unschedulable=False", configured) > success
    # the safe path waits for the job by design: its pod is waited for, never "blocked"
    waits = [p for p in progress if "waiting for 1 GPU pod(s)" in p.message]
    assert waits and all(not p.blocked for p in waits)
    assert any(line.endswith(": still running") for p in waits for line in p.lines())
    assert capacity is not None


def test_failed_change_reports_the_mig_managers_log_and_leaves_the_node_cordoned(
        start: Any) -> None:
    cluster = start("[{at: 1s, action: mig-fail, pool: a100}]")
    idle = next(n for n in cluster.sim.operator.world.pool_members["a100"]
                if n != _busy_node(cluster))
    plan = plan_of(_safe(), cluster, [idle], {"config": "all-1g.10gb", "gpu_pods": "wait"})
    result, _ = apply(_safe(), plan, cluster)
    assert not result.ok
    assert "could not apply all-1g.10gb" in result.summary and "left cordoned" in result.summary
    assert result.error and f"{STATE}=failed" in result.error
    assert "In use by another client" in result.error
    assert cluster.sim.core.read_node(idle).spec.unschedulable


def test_cancel_while_waiting_for_gpu_pods_says_what_was_done(start: Any) -> None:
    cluster = start(job="2d")
    node = _busy_node(cluster)
    action = _safe()
    plan = plan_of(action, cluster, [node], {"config": "all-1g.10gb", "gpu_pods": "wait"})
    cancel = threading.Event()

    def escape_when_waiting(report: Progress) -> None:
        if "waiting for" in report.message:
            cancel.set()

    result = action.apply(plan, cluster.writer, escape_when_waiting, cancel)
    assert result.cancelled and not result.ok
    assert f"{node}: cordoned" in result.details
    assert "stopped while waiting for GPU pods (ml-serving/inference-bert-" in result.summary
    assert cluster.labels(node)[CONFIG] == "all-disabled"
    assert cluster.sim.core.read_node(node).spec.unschedulable


def test_label_only_plan_names_the_pods_and_owners_that_lose_their_gpus(start: Any) -> None:
    cluster = start()
    node = _busy_node(cluster)
    plan = plan_of(SetMigConfig(), cluster, [node], {"config": "all-3g.40gb"})
    assert plan.risk is Risk.DESTRUCTIVE
    assert any("will be terminated: ml-serving/inference-bert-" in w
               and "(Job inference-bert, 1 GPU)" in w for w in plan.warnings)
    assert plan.changes[0].body == {"metadata": {"labels": {CONFIG: "all-3g.40gb", STATE: None}}}
    bogus = plan_of(SetMigConfig(), cluster, [node], {"config": "all-9g.99gb"})
    assert bogus.blocked and "does not offer all-9g.99gb" in bogus.blocked
    same = plan_of(SetMigConfig(), cluster, [node], {"config": "all-disabled"})
    assert same.blocked and "already runs all-disabled" in same.blocked
    result, _ = apply(SetMigConfig(), plan, cluster)
    assert result.ok
    cluster.sim.wait_for(lambda: cluster.labels(node).get(STATE) == "success", 600, "applied")


def test_safe_path_with_drain_evicts_the_job_through_the_drain_action(start: Any) -> None:
    cluster = start(job="2d")
    node = _busy_node(cluster)
    action = _safe()
    plan = plan_of(action, cluster, [node], {"config": "all-2g.20gb", "gpu_pods": "drain"})
    assert any("drain the node" in step for step in plan.steps)
    # the drain's evictions are writes of the plan (dry-run, audited), between the cordon
    # and the label, one per pod the server lists that kubectl's rules evict
    verbs = [c.verb if c.verb == "create" else c.kubectl.split()[1] for c in plan.changes]
    evictions = [f"{c.namespace}/{c.name}" for c in plan.changes if c.verb == "create"]
    assert verbs == ["cordon", *(["create"] * len(evictions)), "label", "uncordon"]
    running = [f"ml-serving/{p.metadata.name}"
               for p in cluster.sim.core.list_namespaced_pod("ml-serving").items
               if p.spec.node_name == node and p.status.phase == "Running"]
    assert running and set(running) <= set(evictions)
    assert any(line.startswith(f"{node}: ") and "listed from the server" in line
               for line in plan.impact)
    result, _progress = apply(action, plan, cluster)
    assert result.ok, (result.summary, result.error)
    assert f"{node}: drained" in result.details
    assert not [p for p in cluster.sim.core.list_namespaced_pod("ml-serving").items
                if p.spec.node_name == node and p.status.phase == "Running"]
    assert cluster.labels(node)[STATE] == "success"
    assert not cluster.sim.core.read_node(node).spec.unschedulable


def test_retrying_the_same_config_is_refused_with_how_to_retry(start: Any) -> None:
    cluster = start("[{at: 1s, action: mig-fail, pool: a100}]")
    idle = next(n for n in cluster.sim.operator.world.pool_members["a100"]
                if n != _busy_node(cluster))
    plan = plan_of(_safe(), cluster, [idle], {"config": "all-1g.10gb", "gpu_pods": "wait"})
    assert not apply(_safe(), plan, cluster)[0].ok
    again = plan_of(_safe(), cluster, [idle], {"config": "all-1g.10gb", "gpu_pods": "wait"})
    assert again.blocked and "acts only when the label changes" in again.blocked
    assert "delete the node's nvidia-mig-manager pod" in again.blocked


def test_safe_path_drain_refused_by_its_options_says_so_and_stops_after_the_cordon(
        start: Any) -> None:
    """A pod with emptyDir data: with kubectl's default options the plan is the cordon
    alone and says the run stops there; the apply cordons, evicts nothing, sets no label.
    With 'also delete emptyDir data' the pod is one of the plan's evictions."""
    cluster = start(job="2d")
    node = _busy_node(cluster)
    cluster.sim.cluster.store.create("pods", gpu_pod("scratch-0", node, namespace="ml-serving",
                                                     owner=("StatefulSet", "s"), gpus=0,
                                                     empty_dir=True, labels={"app": "s"}))
    plan = plan_of(_safe(), cluster, [node], {"config": "all-2g.20gb", "gpu_pods": "drain"})
    assert [c.kubectl for c in plan.changes] == [f"kubectl cordon {node}"]
    assert plan.warnings[0].startswith(f"the drain will cordon {node} and then stop")
    result, _ = apply(_safe(), plan, cluster)
    assert not result.ok and "left cordoned" in result.summary
    assert result.error and "ml-serving/scratch-0" in result.error
    assert cluster.sim.core.read_node(node).spec.unschedulable
    assert cluster.labels(node).get(CONFIG) != "all-2g.20gb"
    assert cluster.sim.cluster.store.get("pods", "scratch-0", "ml-serving") is not None
    allowed = plan_of(_safe(), cluster, [node], {
        "config": "all-2g.20gb", "gpu_pods": "drain, also delete emptyDir data"})
    assert "scratch-0" in {c.name for c in allowed.changes if c.verb == "create"}
