"""``gputui check --json --demo --scenario staggered-joins``: the per-pool time to GPU, the
straggler's ``slow-gpu-join`` naming its stage, and the newcomer's stage, through the real
CLI in a subprocess. Expected figures come from the scenario file's configured builds."""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess
from typing import Any

from gputui.domain.join_pools import nearest_rank
from gputui.sim.scenario import load_scenario

Run = Callable[..., CompletedProcess[str]]
#: what a join adds to its driver build before the driver is Ready (kubelet, NFD, labels,
#: k8s-driver-manager, the startup probe's period), generous for a loaded machine
OVERHEAD = (20, 150)


def _builds() -> dict[str, list[float]]:
    """Pool -> the configured first driver builds of the nodes that join it."""
    scenario = load_scenario("staggered-joins")
    builds: dict[str, list[float]] = {}
    for pool in scenario.pools:
        for event in scenario.timeline:
            if event.action == "join" and event.args["pool"] == pool.name:
                build = float(event.args.get("driverBuild", pool.driver_build))
                builds.setdefault(pool.name, []).extend([build] * int(event.args["count"]))
    return builds


def test_check_gives_each_pools_time_to_gpu_and_the_slow_join(gputui: Run) -> None:
    result = gputui("check", "--json", "--demo", "--scenario", "staggered-joins", timeout=180)
    assert result.returncode == 1, result.stderr  # the straggler is a warning
    report: dict[str, Any] = json.loads(result.stdout)
    pools = {p["pool"]: p for p in report["joins"]}
    assert set(pools) == {"a100", "h100", "l4"}
    builds = _builds()
    for name, pool in pools.items():
        nodes = [n for n in report["nodes"] if n["name"].split("-pool-")[0].endswith(name)]
        done = sorted(n["join"]["seconds"] for n in nodes if n["join"]["state"] == "done")
        assert (pool["count"], pool["p50_s"], pool["p90_s"], pool["max_s"]) == (
            len(done), nearest_rank(done, 50), nearest_rank(done, 90), done[-1])
        assert pool["unknown"] == 1  # the node that joined weeks before its pods
        drivers = [n["join"]["stages"]["driver"] for n in nodes if n["join"]["state"] == "done"]
        if name != "l4":  # the host-driver pool builds nothing
            assert min(builds[name]) + OVERHEAD[0] <= min(drivers)
            assert max(drivers) <= max(b for b in builds[name] if b < 900) + OVERHEAD[1]
            assert pool["slowest_stage"] == "driver"
    assert (pools["h100"]["count"], pools["a100"]["count"], pools["l4"]["count"]) == (5, 3, 3)
    assert pools["a100"]["p50_s"] > pools["h100"]["max_s"] > pools["l4"]["max_s"]
    (slow,) = [f for f in report["findings"] if f["code"] == "slow-gpu-join"]
    assert slow["severity"] == "warning" and "stuck before 'driver ready'" in slow["message"]
    assert pools["h100"]["stragglers"][0] == {
        "node": slow["node"], "seconds": pools["h100"]["stragglers"][0]["seconds"],
        "stage": "driver", "joining": True}
    assert pools["h100"]["stragglers"][0]["seconds"] > pools["h100"]["limit_s"]
    newcomer = pools["h100"]["joining"][-1]
    assert newcomer["stage"] == "driver" and 0 < newcomer["elapsed_s"] < 5 * 60
