"""The canary plan says before ``y`` what will break the roll, and a failed roll says how to
undo it (issue 29 item 5).

Before: the plan's impact covered the canary's own pods only; a budget-protected trainer on a
pool node, which pod deletion (drain off, 300 s) cannot evict, went unmentioned, the roll
then failed there, left the later nodes held and the failed node kept the only slot, and the
outcome pointed at a per-node release with no word of the slot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gputui.actions.canary import CANARY, HELD_BY, CanaryUpgrade, ReleaseCanaryHolds
from tests.actions.upgrade.helpers import SKIP, Cluster, apply, plan_of

SCENARIO = """summary: two pools of two H100 nodes; a budget-protected trainer in pool-b
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 50%,
                      podDeletion: {force: false, timeoutSeconds: 300},
                      drain: {enable: false}}
nodePools:
  - {name: pool-a, prefix: gke-test-a-pool-1a2b, count: 2, gpu: H100-80GB, gpusPerNode: 8}
  - {name: pool-b, prefix: gke-test-b-pool-3c4d, count: 2, gpu: H100-80GB, gpusPerNode: 8}
workloads:
  - {name: trainer-llama, namespace: ml-training, pool: pool-b, count: 1, gpus: 8,
     labels: {app: trainer}, startedAgo: 20h, pdb: true}
timeline: TIMELINE
"""


@pytest.fixture
def start(start_sim: Any, tmp_path: Path) -> Any:
    def run(timeline: str = "[]") -> Cluster:
        path = tmp_path / "canary-pdb.yaml"
        path.write_text(SCENARIO.replace("TIMELINE", timeline))
        cluster = Cluster(start_sim(str(path), speed=600), tmp_path)
        world = cluster.sim.operator.world
        names = world.pool_members["pool-a"] + world.pool_members["pool-b"]
        cluster.sim.wait_for(lambda: all(cluster.state(n) == "upgrade-done" for n in names)
                             and any(p.gpu_pods for p in cluster.snapshot().nodes.values()),
                             600, "nodes upgrade-done, the trainer running")
        return cluster
    return run


def _canary() -> CanaryUpgrade:
    action = CanaryUpgrade()
    action.poll_seconds = 0.05
    return action


def test_the_plan_names_the_pool_node_whose_trainer_deletion_cannot_evict(start: Any) -> None:
    cluster = start()
    snapshot = cluster.snapshot()
    canary = cluster.sim.operator.world.pool_members["pool-a"][0]
    (busy,) = [n.name for n in snapshot.nodes.values() if n.gpu_pods]
    (trainer,) = snapshot.nodes[busy].gpu_pods
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    assert not plan.blocked
    assert plan.warnings[0] == (
        f"the roll would stop in pool pool-b: {busy} upgrade-failed, cordoned, holding 1 of 1 "
        "upgrade slot(s) until fixed")
    story = next(line for line in plan.impact if line.startswith(f"{busy}: "))
    assert f"cannot remove ml-training/{trainer.name}" in story
    assert "PodDisruptionBudget " in story and "allows no disruption now" in story
    assert "pod deletion (300 s)" in story and "(drain off)" in story
    assert any(line.startswith("GPU pods checked against the upgrade's deletion and drain")
               for line in plan.impact)


def test_a_failed_canary_names_the_holds_the_slot_and_the_one_command(start: Any) -> None:
    cluster = start("[{at: 1s, action: crashloop, node: pool-a/0, "
                    "reason: kernel-headers, nextStart: true}]")
    world = cluster.sim.operator.world
    canary = world.pool_members["pool-a"][0]
    others = world.pool_members["pool-a"][1:] + world.pool_members["pool-b"]
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    result, _ = apply(_canary(), plan, cluster)
    assert not result.ok
    assert f"{canary} stays cordoned and holds 1 of 1 upgrade slot(s) until fixed" \
        in result.summary
    assert "holds left on 3 node(s) (" in result.summary
    assert ":release-canary releases them all" in result.summary
    assert all(cluster.labels(n).get(HELD_BY) == CANARY for n in others)
    # someone else's hold is not the canary's to release
    cluster.sim.core.patch_node(others[0], {"metadata": {"labels": {HELD_BY: None}}})
    release = plan_of(ReleaseCanaryHolds(), cluster)
    assert set(release.targets) == set(others[1:])
    done, _ = apply(ReleaseCanaryHolds(), release, cluster)
    assert done.ok, done.summary
    assert all(SKIP not in cluster.labels(n) for n in others[1:])
    assert cluster.labels(others[0]).get(SKIP) == "true"


def test_a_canary_whose_own_pod_is_stuck_ends_the_roll_at_the_canary() -> None:
    from gputui.actions.canary_risks import Stuck, ending
    from gputui.domain.upgrade_policy import UpgradePolicy

    stuck = [Stuck("c", "a", "ml/t", "PodDisruptionBudget t allows no disruption now", False)]
    line = ending(stuck, "c", [("a", ["d"]), ("b", ["e", "f"])], UpgradePolicy())
    assert line == ("the roll would end at the canary: c upgrade-failed holding a slot, the 3 "
                    "other node(s) left held (:release-canary releases them)")
    waited = [Stuck("d", "a", "ml/t", "x", True)]
    assert ending(waited, "c", [("a", ["d"])], UpgradePolicy()).startswith(
        "the roll would wait (not fail) at d")
