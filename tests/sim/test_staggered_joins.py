"""``staggered-joins``: nodes join three pools with the driver builds the scenario configures;
gputui's time to GPU, read through the real client from what the emulated kubelet records,
matches them.

Expected figures come from the scenario file: each node's first driver build is its pool's
``driverBuild`` or its join's; the emulated kubelet's own moment of listing the GPUs
(``NodeRun.allocatable_at``) is the ground truth the records must give back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.domain.join_pools import nearest_rank
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sim.scenario import load_scenario
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from tests.sim.conftest import Sim

SCENARIO = "staggered-joins"
#: 16 emulated minutes in 16 s: slow enough that a stalled test thread (a loaded machine)
#: does not let the straggler finish before the clock is held
SPEED = 60
#: what a join adds to its driver build before the driver is ready: the kubelet registering
#: (10 s), NFD (15 s), the operator's labels and the DaemonSet pods, k8s-driver-manager
#: (10 s), the startup probe's period; generous for a loaded machine
DRIVER_OVERHEAD = (20.0, 120.0)


def _configured_builds(sim: Sim) -> dict[str, float]:
    """Node name -> its configured first driver build, from the scenario file (pool members
    join in timeline order after the converged ones)."""
    scenario = load_scenario(SCENARIO)
    builds: dict[str, list[float]] = {}
    for pool in scenario.pools:
        builds[pool.name] = []
        for event in sorted(scenario.timeline, key=lambda e: e.at):
            if event.action == "join" and event.args["pool"] == pool.name:
                build = float(event.args.get("driverBuild", pool.driver_build))
                builds[pool.name] += [build] * int(event.args.get("count", 1))
    result = {}
    for pool_name, joined in builds.items():
        members = sim.operator.world.pool_members[pool_name]
        converged = len(members) - len(joined)
        for name, build in zip(members[converged:], joined, strict=True):
            result[name] = build
    return result


def _snapshot(sim: Sim, tmp_path: Path) -> Any:
    path = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")
    objects = read_objects(load_target(str(path)))
    return SnapshotBuilder().build(objects, sim.cluster.clock.now())


def test_pool_figures_match_the_emulated_stage_times(start_sim: Any, tmp_path: Path) -> None:
    sim = start_sim(SCENARIO, speed=SPEED)
    settle = float(load_scenario(SCENARIO).settle_seconds or 0)
    sim.wait_for(lambda: sim.emulated() >= settle, settle + 60, "the scenario settles")
    sim.cluster.clock.set_speed(1.0)  # read it as it settled
    snap = _snapshot(sim, tmp_path)
    builds = _configured_builds(sim)
    world = sim.operator.world
    totals: dict[str, list[float]] = {}
    for name, build in builds.items():
        run, join = world.nodes[name], snap.nodes[name].join
        if run.allocatable_at is None:
            continue
        # the records give back the kubelet's moment: the device-plugin pod turns Ready when
        # its config-manager sidecar is ready too, a few seconds after the plugin registered
        # (and times are written to the second)
        assert join.state == "done" and join.joined is not None
        assert -1.5 <= join.joined + join.total - run.allocatable_at <= 6, name
        driver = join.stage_seconds()[0] if run.pool != "l4" else None
        if driver is not None:  # the host-driver pool builds nothing
            assert build + DRIVER_OVERHEAD[0] <= driver <= build + DRIVER_OVERHEAD[1], name
        totals.setdefault(run.pool, []).append(join.total)
    pools = {p.pool: p for p in snap.joins}
    for pool, values in totals.items():
        values.sort()
        figures = pools[pool]
        assert (figures.count, figures.p50, figures.p90, figures.max) == (
            len(values), nearest_rank(values, 50), nearest_rank(values, 90), values[-1])
    # the story: the slow pool is slow, the host-driver pool is fast, builds dominate
    assert pools["a100"].p50 > pools["h100"].max > pools["l4"].max
    assert pools["a100"].slowest_stage == pools["h100"].slowest_stage == "driver"
    assert pools["h100"].count == 5 and pools["a100"].count == pools["l4"].count == 3
    # each pool's converged node joined weeks before its pods: unknown, not counted
    assert all(p.unknown == 1 for p in pools.values())


def test_the_straggler_is_slow_in_its_stage_and_the_newcomer_says_where_it_is(
        start_sim: Any, tmp_path: Path) -> None:
    sim = start_sim(SCENARIO, speed=SPEED)
    settle = float(load_scenario(SCENARIO).settle_seconds or 0)
    sim.wait_for(lambda: sim.emulated() >= settle, settle + 60, "the scenario settles")
    sim.cluster.clock.set_speed(1.0)
    snap = _snapshot(sim, tmp_path)
    builds = _configured_builds(sim)
    straggler = max(builds, key=lambda n: builds[n])
    newcomer = sim.operator.world.pool_members["h100"][-1]
    (slow,) = [x for x in snap.findings if x.code == "slow-gpu-join"]
    assert slow.node == straggler and slow.severity.value == "warning"
    assert "stuck before 'driver ready' (driver compiling)" in slow.message
    h100 = next(p for p in snap.joins if p.pool == "h100")
    assert slow.node in {s.node for s in h100.stragglers if s.joining}
    join = snap.nodes[newcomer].join
    assert join.state == "joining" and join.stage == "driver"
    elapsed = join.elapsed(snap.generated_at)
    assert 0 < elapsed <= 5 * 60  # it joined at 15 min; its build takes 5
    assert snap.nodes[newcomer].coming_up is not None
