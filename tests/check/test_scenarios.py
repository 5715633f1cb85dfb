"""End to end: ``gputui check --json --demo --scenario X`` reports what each scenario plants.

The real CLI in a subprocess, the emulated cluster over real HTTP, the domain's findings.
``scale-5000`` is left to ``benchmarks/bench_check.py`` (its set-up alone takes minutes).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import gputui.sim as sim_package
from gputui.sim.scenario import list_scenarios

Run = Callable[..., subprocess.CompletedProcess[str]]
SHIPPED = {name for name, _ in list_scenarios()}
SCENARIO_DIR = Path(sim_package.__file__).parent / "scenarios"
IN_PROGRESS = {"cordon-required", "wait-for-jobs-required", "pod-deletion-required",
               "drain-required", "pod-restart-required", "validation-required",
               "uncordon-required", "upgrade-failed"}


def check(gputui: Run, scenario: str) -> tuple[int, dict[str, Any]]:
    # every scenario ships (``gputui scenarios``): a missing one fails, so a renamed or lost
    # scenario can never turn its test into a silent pass
    if scenario not in SHIPPED:
        pytest.fail(f"scenario {scenario} is not shipped (gputui scenarios: {sorted(SHIPPED)})")
    result = gputui("check", "--json", "--demo", "--scenario", scenario, timeout=180)
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == ""
    return result.returncode, json.loads(result.stdout)


def check_file(gputui: Run, path: Path, speed: float = 100) -> tuple[int, dict[str, Any]]:
    """``check --json --demo`` on a scenario file, its emulated clock at ``speed`` or more
    (a few seconds of real time for minutes of emulated life)."""
    result = gputui("check", "--json", "--demo", "--speed", str(speed), "--scenario",
                    str(path), timeout=180)
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == ""
    return result.returncode, json.loads(result.stdout)


def variant(tmp_path: Path, base: str, name: str, **changes: Any) -> Path:
    """A shipped scenario with top-level keys replaced, written as a scenario file."""
    data = yaml.safe_load((SCENARIO_DIR / f"{base}.yaml").read_text())
    data.update(changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def not_info(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["code"], f["severity"], f["message"]) for f in report["findings"]
            if f["severity"] != "info"]


def codes(report: dict[str, Any], severity: str | None = None) -> set[str]:
    return {f["code"] for f in report["findings"]
            if severity is None or f["severity"] == severity}


def test_healthy_has_nothing_to_say(gputui: Run) -> None:
    rc, report = check(gputui, "healthy")
    assert rc == 0 and codes(report, "critical") == set() and codes(report, "warning") == set()
    assert report["cluster_policy"]["state"] == "ready"
    assert len(report["nodes"]) == 7 and all(n["ready"] for n in report["nodes"])
    assert all(s["status"] in ("ready", "disabled") for n in report["nodes"]
               for s in n["pipeline"])


def test_empty_cluster(gputui: Run) -> None:
    rc, report = check(gputui, "empty")
    assert rc == 0 and report["nodes"] == [] and codes(report, "critical") == set()


def test_node_join_converges(gputui: Run) -> None:
    _, report = check(gputui, "node-join")
    assert len(report["nodes"]) == 4 and codes(report, "critical") == set()


def test_driver_crashloop(gputui: Run) -> None:
    rc, report = check(gputui, "driver-crashloop")
    assert rc == 1 and "driver-pod-failing" in codes(report, "critical")


def test_validator_stuck_names_the_init_container(gputui: Run) -> None:
    """gpu-operator ``cmd/nvidia-validator/main.go`` binds the CUDA pod to the node: taints
    cannot stop it, so the hint names what can (image pull, runtime, driver), not taints."""
    rc, report = check(gputui, "validator-stuck")
    stuck = [f for f in report["findings"] if f["code"] == "validator-stuck"]
    assert rc == 1 and stuck and "cuda-validation" in stuck[0]["message"]
    assert "CrashLoopBackOff" in stuck[0]["message"] or "gave up" in stuck[0]["message"]
    hint = stuck[0]["hint"].lower()
    assert "taint" not in hint and "toleration" not in hint
    assert "pull" in hint and "runtime" in hint and "driver" in hint


def test_mig_reconfig_failed(gputui: Run) -> None:
    rc, report = check(gputui, "mig-reconfig-failed")
    assert rc == 1 and "mig-config-failed" in codes(report)


def test_time_slicing_is_healthy(gputui: Run) -> None:
    _, report = check(gputui, "time-slicing")
    assert codes(report, "critical") == set() and report["nodes"]


def test_upgrade_failed(gputui: Run) -> None:
    rc, report = check(gputui, "upgrade-failed")
    assert rc == 1 and "upgrade-failed" in codes(report)
    assert any(n["upgrade_state"] == "upgrade-failed" for n in report["nodes"])


def test_upgrade_rolling_rolls_within_policy_and_exits_0(gputui: Run) -> None:
    """A roll within its policy is normal life: nodes finish, others are under way, exit 0."""
    rc, report = check(gputui, "upgrade-rolling")
    states = [n["upgrade_state"] for n in report["nodes"]]
    assert any(s in IN_PROGRESS for s in states) and "upgrade-done" in states, states
    assert rc == 0 and codes(report, "warning") == set() and codes(report, "critical") == set(), (
        states, not_info(report))


def test_upgrade_slots_held_completes_nothing(gputui: Run) -> None:
    rc, report = check(gputui, "upgrade-slots-held")
    states = [n["upgrade_state"] for n in report["nodes"]]
    assert rc == 1 and "upgrade-failed" in states
    assert "wait-for-jobs-required" in states
    # one stalled queue is one finding, at cluster level, listing every waiting node
    # (k8s-operator-libs pkg/upgrade/common_manager.go: failed nodes hold their slots)
    stalled = [f for f in report["findings"]
               if f["code"] == "upgrade-stalled" and f["severity"] != "info"]
    waiting = sorted(n["name"] for n in report["nodes"] if n["upgrade_state"] == "upgrade-required")
    assert len(waiting) == 20 and len(stalled) == 1, [f["message"] for f in stalled]
    (queue,) = stalled
    assert queue["node"] is None and queue["nodes"] == waiting
    assert queue["message"].startswith("upgrade queue stalled: 4 of 4 slots held by 1 failed "
                                       "node, 3 in wait-for-jobs-required; 20 nodes waiting")


def test_normal_life_exits_0(gputui: Run) -> None:
    """A node joining, a reboot, an upgrade in progress and a job holding a node as
    waitForCompletion configures: info findings at most (ARCHITECTURE.md, check contract)."""
    rc, report = check(gputui, "normal-life")
    assert rc == 0, [(f["code"], f["severity"], f["message"]) for f in report["findings"]]
    assert {f["severity"] for f in report["findings"]} <= {"info"}
    assert "wait-for-jobs-required" in [n["upgrade_state"] for n in report["nodes"]]
    assert len(report["nodes"]) == 5
    # the node that joined at 3 min is explained by its own pipeline, not by the upgrade
    (joined,) = [n for n in report["nodes"] if n["gpus"]["count"] == 0]
    (policy,) = [f for f in report["findings"] if f["code"] == "cluster-policy-not-ready"]
    assert f"on {joined['name']}" in policy["message"], policy["message"]


def test_xid_storm(gputui: Run) -> None:
    rc, report = check(gputui, "xid-storm")
    xids = [f for f in report["findings"] if f["code"] == "xid-error"]
    assert rc == 1 and any("XID 79" in f["message"] and f["severity"] == "critical"
                           for f in xids)


def test_a_missing_scenario_fails_rather_than_skips(gputui: Run) -> None:
    with pytest.raises(pytest.fail.Exception, match="not shipped"):
        check(gputui, "no-such-scenario")


def test_upgrade_drain_blocked_says_why(gputui: Run) -> None:
    """The drain timed out on the trainer's eviction: the failure names the pod and the
    PodDisruptionBudget that held it, as the emulated disruption controller counts it
    (issue 29 item 4), read by ``check`` from ``/apis/policy/v1/poddisruptionbudgets``."""
    rc, report = check(gputui, "upgrade-drain-blocked")
    failed = [f for f in report["findings"] if f["code"] == "upgrade-failed"]
    assert rc == 1 and failed and "Failed to drain the node" in failed[0]["message"]
    assert [n["upgrade_state"] for n in report["nodes"]].count("upgrade-failed") == 1
    hint = failed[0]["hint"]
    assert "The driver is not the cause: pod ml-training/trainer-llama-" in hint
    assert ("was never evicted: PodDisruptionBudget ml-training/trainer-llama-pdb "
            "(app=trainer) allows 0 disruptions (needs 1 healthy pod, has 1), and its "
            "eviction was refused until the 5m0s timeout") in hint
    assert "kubectl get pdb" not in hint
    assert "poddisruptionbudgets" not in {g["resource"] for g in report["unreadable"]}


#: ``gputui sim --faults join:h100:2@5s`` as a timeline entry
JOIN = {"at": "5s", "action": "join", "pool": "h100", "count": 2}
#: emulated seconds after start: issue 19's 35, 65 and 95 s and 4 min (the driver compiling),
#: the toolkit, validator and device plugin coming up behind it, then settled
JOIN_MOMENTS = (35, 65, 95, 240, 345, 360, 480)


@pytest.mark.parametrize("moment", JOIN_MOMENTS)
def test_nodes_joining_exit_0_at_every_moment_through_to_allocatable(
        gputui: Run, tmp_path: Path, moment: int) -> None:
    """Two H100 nodes join the healthy cluster. Until GFD runs behind the driver, toolkit and
    validator they have no ``nvidia.com/gpu.count`` (gpu-operator
    ``assets/gpu-feature-discovery/0500_daemonset.yaml``: ``toolkit-validation`` first) and
    the ClusterPolicy is notReady; that is normal life at every moment: exit 0, info only.
    Today's code exits 1 with ``warning cluster-policy-not-ready`` at 35, 65 and 95 s.
    One test per moment: each is its own emulated cluster, so they run side by side."""
    path = variant(tmp_path, "healthy", f"join-{moment}", settleSeconds=f"{moment}s",
                   timeline=[JOIN])
    # the clock at the settle's own pace (the moment in ~4 s of real time), never faster than
    # needed: at 100x, 35 emulated seconds are 0.35 s and a loaded machine's controllers had
    # not yet played the join at 5 s when check read the cluster
    rc, report = check_file(gputui, path, speed=10)
    assert rc == 0 and not_info(report) == [], (moment, not_info(report))
    joined = [n for n in report["nodes"] if n["gpus"]["count"] == 0]
    if moment <= 240:  # the driver compiles: realistic preconditions first
        assert len(joined) == 2 and report["cluster_policy"]["state"] == "notReady"
        assert all(n["gpus"]["allocatable"] == 0 and n["pipeline"][0]["status"] ==
                   "progressing" for n in joined), joined
        (policy,) = [f for f in report["findings"] if f["code"] == "cluster-policy-not-ready"]
        assert all(n["name"] in policy["message"] for n in joined), policy["message"]
    if moment == max(JOIN_MOMENTS):  # settled: both joined and allocatable
        assert report["cluster_policy"]["state"] == "ready"
        assert len(report["nodes"]) == 9
        assert all(n["gpus"]["allocatable"] == n["gpus"]["count"] == 8
                   for n in report["nodes"])


def test_normal_life_without_an_upgrade_exits_0_on_the_join_alone(
        gputui: Run, tmp_path: Path) -> None:
    """``normal-life`` minus its driver upgrade: the node that joined at 3 min compiles its
    driver and has no gpu.count; nothing but its own pipeline can explain the notReady
    ClusterPolicy, and the message names it (today's says "1 node(s) come up" only because
    another node happens to carry an info finding)."""
    shipped = yaml.safe_load((SCENARIO_DIR / "normal-life.yaml").read_text())
    timeline = [e for e in shipped["timeline"] if e["action"] != "driver-version"]
    rc, report = check_file(gputui, variant(tmp_path, "normal-life", "no-upgrade",
                                            timeline=timeline), speed=60)
    assert rc == 0 and not_info(report) == [], not_info(report)
    assert {n["upgrade_state"] for n in report["nodes"]} <= {"", "upgrade-done"}
    (joined,) = [n for n in report["nodes"] if n["gpus"]["count"] == 0]
    (policy,) = [f for f in report["findings"] if f["code"] == "cluster-policy-not-ready"]
    assert f"driver compiling on {joined['name']}" in policy["message"], policy["message"]


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_all_enabled_is_one_warning_that_says_why(gputui: Run, tmp_path: Path,
                                                   strategy: str) -> None:
    """Not in the exit-0 suite, by upstream's code: with MIG on and no instances the device
    plugin gives no GPU resource (k8s-device-plugin ``internal/rm/device_map.go``; under
    single it exits), the validator's ``plugin-validation`` fails (gpu-operator
    ``cmd/nvidia-validator/main.go``, ``validateGPUResource``) and the ClusterPolicy stays
    notReady (``controllers/object_controls.go``, ``isDaemonSetReady``). So exit 1 with one
    warning, ``mig-no-instances`` on each such node, the notReady blamed on it."""
    path = variant(tmp_path, "healthy", f"all-enabled-{strategy}",
                   clusterPolicy={"spec": {"mig": {"strategy": strategy}}},
                   nodePools=[{"name": "a100", "prefix": "gke-prod-a100-pool-2b9c", "count": 1,
                               "gpu": "A100-80GB", "gpusPerNode": 8, "migConfig": "all-enabled"},
                              {"name": "h100", "prefix": "gke-prod-h100-pool-7f3a", "count": 1,
                               "gpu": "H100-80GB", "gpusPerNode": 8}], workloads=[])
    rc, report = check_file(gputui, path)
    (a100,) = [n["name"] for n in report["nodes"] if "a100" in n["name"]]
    assert rc == 1 and [(c, s) for c, s, _ in not_info(report)] == [
        ("mig-no-instances", "warning")], not_info(report)
    assert report["cluster_policy"]["state"] == "notReady"
    (policy,) = [f for f in report["findings"] if f["code"] == "cluster-policy-not-ready"]
    assert policy["severity"] == "info" and f"mig-no-instances on {a100}" in policy["message"]


def test_a_sharing_config_naming_a_devices_subset_is_healthy(gputui: Run,
                                                             tmp_path: Path) -> None:
    """``devices: [0, 1]`` in a time-slicing config: the device plugin, GFD and MPS daemon
    force ``Devices.All`` before using the config (k8s-device-plugin ``api/config/v1/
    config.go`` ``DisableResourceNamingInConfig``, ``replicas.go`` ``disableResoureRenaming``),
    so every GPU is replicated: 4 T4s x 4 = 16, what gputui expects, and exit 0."""
    shipped = yaml.safe_load((SCENARIO_DIR / "time-slicing.yaml").read_text())
    config = shipped["devicePluginConfig"]
    text = config["data"]["tesla-t4"]
    config["data"]["tesla-t4"] = text.replace("\n      replicas: 4",
                                              "\n      devices: [0, 1]\n      replicas: 4")
    resources = yaml.safe_load(config["data"]["tesla-t4"])["sharing"]["timeSlicing"]["resources"]
    assert resources == [{"name": "nvidia.com/gpu", "devices": [0, 1], "replicas": 4}]
    rc, report = check_file(gputui, variant(tmp_path, "time-slicing", "subset",
                                            devicePluginConfig=config))
    assert rc == 0, not_info(report)
    t4 = [n for n in report["nodes"] if "t4" in n["name"]]
    assert t4 and all(n["gpus"]["allocatable"] == 16 for n in t4), [n["gpus"] for n in t4]
