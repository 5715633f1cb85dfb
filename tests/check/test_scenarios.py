"""End to end: ``gputui check --json --demo --scenario X`` reports what each scenario plants.

The real CLI in a subprocess, the emulated cluster over real HTTP, the domain's findings.
``scale-5000`` is left to ``benchmarks/bench_check.py`` (its set-up alone takes minutes).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from gputui.sim.scenario import list_scenarios

Run = Callable[..., subprocess.CompletedProcess[str]]
SHIPPED = {name for name, _ in list_scenarios()}
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
    assert any(s in IN_PROGRESS for s in states) and "upgrade-done" in states
    assert rc == 0 and codes(report, "warning") == set() and codes(report, "critical") == set()


def test_upgrade_slots_held_completes_nothing(gputui: Run) -> None:
    rc, report = check(gputui, "upgrade-slots-held")
    states = [n["upgrade_state"] for n in report["nodes"]]
    assert rc == 1 and "upgrade-failed" in states
    assert "wait-for-jobs-required" in states


def test_normal_life_exits_0(gputui: Run) -> None:
    """A node joining, a reboot, an upgrade in progress and a job holding a node as
    waitForCompletion configures: info findings at most (ARCHITECTURE.md, check contract)."""
    rc, report = check(gputui, "normal-life")
    assert rc == 0, [(f["code"], f["severity"], f["message"]) for f in report["findings"]]
    assert {f["severity"] for f in report["findings"]} <= {"info"}
    assert "wait-for-jobs-required" in [n["upgrade_state"] for n in report["nodes"]]
    assert len(report["nodes"]) == 5


def test_xid_storm(gputui: Run) -> None:
    rc, report = check(gputui, "xid-storm")
    xids = [f for f in report["findings"] if f["code"] == "xid-error"]
    assert rc == 1 and any("XID 79" in f["message"] and f["severity"] == "critical"
                           for f in xids)


def test_a_missing_scenario_fails_rather_than_skips(gputui: Run) -> None:
    with pytest.raises(pytest.fail.Exception, match="not shipped"):
        check(gputui, "no-such-scenario")


def test_upgrade_drain_blocked_says_why(gputui: Run) -> None:
    rc, report = check(gputui, "upgrade-drain-blocked")
    failed = [f for f in report["findings"] if f["code"] == "upgrade-failed"]
    assert rc == 1 and failed and "Failed to drain the node" in failed[0]["message"]
    assert [n["upgrade_state"] for n in report["nodes"]].count("upgrade-failed") == 1
