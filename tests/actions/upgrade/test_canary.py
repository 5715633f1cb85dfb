"""The guided canary roll-out (journey 3) against the emulated operator.

A recorder on the store's watch keeps the order in which nodes change upgrade state; the
tests assert on that order (nothing else rolls before the canary is done, pools one after
the other) and on the stored labels at the end.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from gputui.actions.audit import AuditLog
from gputui.actions.base import Progress, Risk
from gputui.actions.canary import CanaryUpgrade
from gputui.actions.canary_slots import NodeRead, SlotReader, describe, figures_from
from gputui.actions.runner import Runner
from gputui.sim.store import WatchEvent
from tests.actions.upgrade.helpers import SKIP, STATE, Cluster, apply, plan_of

SCENARIO = """summary: two pools of two H100 nodes, one node at a time
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 50%}
nodePools:
  - {name: pool-a, prefix: gke-test-a-pool-1a2b, count: 2, gpu: H100-80GB, gpusPerNode: 8}
  - {name: pool-b, prefix: gke-test-b-pool-3c4d, count: 2, gpu: H100-80GB, gpusPerNode: 8}
timeline: TIMELINE
"""
IDLE = ("", "upgrade-done", "upgrade-required")


@pytest.fixture
def start(start_sim: Any, tmp_path: Path) -> Any:
    def run(timeline: str = "[]") -> tuple[Cluster, list[tuple[str, str]]]:
        path = tmp_path / "canary.yaml"
        path.write_text(SCENARIO.replace("TIMELINE", timeline))
        cluster = Cluster(start_sim(str(path), speed=600), tmp_path)
        world = cluster.sim.operator.world
        names = world.pool_members["pool-a"] + world.pool_members["pool-b"]
        cluster.sim.wait_for(lambda: all(cluster.state(n) == "upgrade-done" for n in names),
                             600, "nodes upgrade-done")
        moves: list[tuple[str, str]] = []
        last: dict[str, str] = {}

        def record(event: WatchEvent) -> None:
            meta = event.obj["metadata"]
            state = (meta.get("labels") or {}).get(STATE, "")
            if last.get(meta["name"]) != state:
                last[meta["name"]] = state
                moves.append((meta["name"], state))

        cluster.sim.cluster.store.watch("nodes", record)
        return cluster, moves
    return run


def _canary() -> CanaryUpgrade:
    action = CanaryUpgrade()
    action.poll_seconds = 0.05
    return action


def test_canary_first_then_pool_by_pool_and_every_hold_released(start: Any) -> None:
    cluster, moves = start()
    world = cluster.sim.operator.world
    canary, partner = world.pool_members["pool-a"]
    pool_b = sorted(world.pool_members["pool-b"])
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    assert plan.risk is Risk.CLUSTER_WIDE and plan.confirm_text == "580.82.07"
    assert [c.name for c in plan.changes] == [partner, *pool_b, "cluster-policy"]
    assert plan.changes[-1].resource_version == cluster.policy()["metadata"]["resourceVersion"]
    assert plan.params["pools"] == [["pool-a", [partner]], ["pool-b", pool_b]]
    assert "5. release pool pool-b (2 node(s)), wait until they are upgrade-done" in plan.steps
    result, progress = apply(_canary(), plan, cluster)
    assert result.ok, (result.summary, result.error)
    assert cluster.policy()["spec"]["driver"]["version"] == "580.82.07"
    for node in (canary, partner, *pool_b):
        assert SKIP not in cluster.labels(node) and cluster.state(node) == "upgrade-done"
    busy = [(n, s) for n, s in moves if s not in IDLE]
    canary_done = max(i for i, (n, s) in enumerate(moves) if n == canary and s == "upgrade-done")
    first_other = min(i for i, (n, s) in enumerate(moves) if n != canary and s not in IDLE)
    assert canary_done < first_other
    partner_done = max(i for i, (n, s) in enumerate(moves) if n == partner and s == "upgrade-done")
    assert all(i > partner_done for i, (n, s) in enumerate(moves) if n in pool_b and s not in IDLE)
    assert {n for n, _ in busy} == {canary, partner, *pool_b}
    assert any(p.message.startswith(f"canary {canary}: ") for p in progress)
    assert any(p.message.startswith("pool pool-b: ") for p in progress)


def test_a_pool_node_waiting_for_its_slot_is_waiting_never_blocked(start: Any) -> None:
    """With maxParallelUpgrades 1, pool-b's second node waits in upgrade-required while the
    first upgrades: its progress line says "waiting for a slot (1 of 1 in use)", the
    controller's own figures (k8s-operator-libs ``pkg/upgrade/common_manager.go``,
    ``GetUpgradesAvailable``, as :mod:`gputui.domain.upgrade_slots`), and nothing of the
    roll is "blocked" (before, every node not yet done was listed as blocked with its
    state: ``blocked: gke-...: upgrade-required``). The clock slows to 60x once pool-b is
    released, so that the wait lasts many polls rather than a few."""
    cluster, _ = start()
    world = cluster.sim.operator.world
    canary = world.pool_members["pool-a"][0]
    pool_b = sorted(world.pool_members["pool-b"])
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    for change in plan.changes:
        cluster.writer.patch(change, dry_run=True)
    seen: list[Progress] = []

    def report(progress: Progress) -> None:
        if progress.message.startswith("pool pool-b: ") and cluster.sim.cluster.clock.speed > 60:
            cluster.sim.cluster.clock.set_speed(60)
        seen.append(progress)

    result = _canary().apply(plan, cluster.writer, report, threading.Event())
    assert result.ok, (result.summary, result.error)
    reports = [p for p in seen if p.message.startswith("pool pool-b: ")]
    lines = [line for p in reports for line in p.lines()]
    assert any(line in [f"{n}: waiting for a slot (1 of 1 in use)" for n in pool_b]
               for line in lines), lines
    assert not any(p.blocked for p in seen), [p.blocked for p in seen if p.blocked]
    assert not any("blocked" in line for line in lines)



def test_a_pool_node_behind_a_failed_node_is_blocked_and_says_why() -> None:
    """"blocked" is kept for what an operator must fix: a failed node outside the pool
    holds the only slot (it keeps it until its driver pod is ready, k8s-operator-libs
    ``pkg/upgrade/common_manager.go``); a node already cordoned needs no slot."""
    up = NodeRead("upgrade-required", cordoned=False, ready=True)
    nodes = {"x": NodeRead("upgrade-failed", cordoned=False, ready=True), "a": up,
             "b": NodeRead("upgrade-required", cordoned=True, ready=True),
             "c": NodeRead("", cordoned=False, ready=True)}
    waiting, blocked = describe(["a", "b", "c"], nodes, figures_from(nodes, 1, "50%"))
    assert blocked == (("a: waiting for a slot (1 of 1 in use, 1 failed): 1 upgrade-failed "
                        "node holds its slot until fixed"),)
    assert waiting == ("b: upgrade-required, starts at the controller's next pass",
                       "c: no upgrade state yet")
    moving = {"x": NodeRead("drain-required", cordoned=True, ready=True), "a": up,
              "c": nodes["c"], "d": up}
    waiting, blocked = describe(["a"], moving, figures_from(moving, 1, "50%"))
    assert (waiting, blocked) == (("a: waiting for a slot (1 of 1 in use)",), ())



def test_slot_figures_that_cannot_be_read_are_left_out(start: Any) -> None:
    """The figures only explain a wait: when the driver object cannot be read (here it is
    gone: 404) the poll says the node's state without them instead of ending the roll."""
    cluster, _ = start()
    canary = cluster.sim.operator.world.pool_members["pool-a"][0]
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    reader = SlotReader(plan, cluster.writer)
    assert reader.managed and reader.figures({}) is not None
    cluster.sim.custom.delete_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert reader.figures({}) is None
    up = {canary: NodeRead("upgrade-required", cordoned=False, ready=True)}
    assert describe([canary], up, None) == ((f"{canary}: upgrade-required",), ())


def test_a_failed_canary_stops_the_roll_out_with_every_hold_in_place(start: Any) -> None:
    cluster, moves = start("[{at: 1s, action: crashloop, node: pool-a/0, "
                           "reason: kernel-headers, nextStart: true}]")
    world = cluster.sim.operator.world
    canary = world.pool_members["pool-a"][0]
    others = world.pool_members["pool-a"][1:] + world.pool_members["pool-b"]
    plan = plan_of(_canary(), cluster, [canary], {"version": "580.82.07"})
    result, _ = apply(_canary(), plan, cluster)
    assert not result.ok and not result.cancelled
    assert f"canary {canary} failed the upgrade (upgrade-failed)" in result.summary
    assert "holds left on 3 node(s)" in result.summary
    assert all(cluster.labels(n).get(SKIP) == "true" for n in others)
    assert not [m for m in moves if m[0] != canary and m[1] not in IDLE]


def test_cancel_while_watching_the_canary_keeps_the_holds(start: Any) -> None:
    cluster, _ = start()
    canary = cluster.sim.operator.world.pool_members["pool-a"][0]
    action = _canary()
    plan = plan_of(action, cluster, [canary], {"version": "580.82.07"})
    cancel = threading.Event()

    def escape(report: Progress) -> None:
        if report.message.startswith(f"canary {canary}"):
            cancel.set()

    result = action.apply(plan, cluster.writer, escape, cancel)
    assert result.cancelled and "holds left on 3 node(s)" in result.summary
    assert any("driver version 570.172.08 -> 580.82.07" in line for line in result.details)


def test_canary_is_refused_with_autoupgrade_off_or_a_second_target(start: Any) -> None:
    cluster, _ = start()
    names = cluster.sim.operator.world.pool_members["pool-a"]
    two = plan_of(_canary(), cluster, names, {"version": "580.82.07"})
    assert two.blocked == "choose exactly one canary node"
    cluster.sim.custom.patch_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy",
        {"spec": {"driver": {"upgradePolicy": {"autoUpgrade": False}}}})
    off = plan_of(_canary(), cluster, names[:1], {"version": "580.82.07"})
    assert off.blocked and "autoUpgrade is off" in off.blocked


def test_a_27_node_canary_dry_runs_every_write(start_sim: Any, request_queries: list[Any],
                                               tmp_path: Path) -> None:
    """26 holds and the version patch: 27 writes, each sent with dryRun=All (before, the
    first 20 only, and the ClusterPolicy patch, the one that matters, is last)."""
    path = tmp_path / "canary27.yaml"
    path.write_text(SCENARIO.replace("count: 2, gpu: H100-80GB", "count: 14, gpu: H100-80GB", 1)
                    .replace("count: 2, gpu: H100-80GB", "count: 13, gpu: H100-80GB")
                    .replace("TIMELINE", "[]"))
    cluster = Cluster(start_sim(str(path), speed=600), tmp_path)
    world = cluster.sim.operator.world
    canary = world.pool_members["pool-a"][0]
    assert len(world.pool_members["pool-a"]) + len(world.pool_members["pool-b"]) == 27
    cluster.sim.wait_for(lambda: cluster.state(canary) == "upgrade-done", 600, "canary ready")
    runner = Runner(cluster.writer, AuditLog(tmp_path / "audit.jsonl"))
    plan = runner.plan(_canary(), cluster.snapshot(), [canary], {"version": "580.82.07"})
    assert len(plan.changes) == 27 and plan.changes[-1].kind == "ClusterPolicy"
    request_queries.clear()
    dry = runner.dry_run(plan)
    sent = [urlsplit(p).path for verb, p in request_queries
            if verb == "PATCH" and parse_qs(urlsplit(p).query).get("dryRun") == ["All"]]
    assert len(sent) == 27
    assert "/apis/nvidia.com/v1/clusterpolicies/cluster-policy" in sent
    assert dry.ok and dry.summary() == "passed (27 of 27 writes checked)"
    assert cluster.policy()["spec"]["driver"]["version"] != "580.82.07"
