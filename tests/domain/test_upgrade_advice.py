"""Upgrade advice names only what applies to the node's state (issue 29 item 4).

Each test here failed on the code before: the wait-for-jobs hint recommended the skip label
for a node already past ``upgrade-required`` (the hold dialog then said it would not help),
a queue whose every slot holder was stuck was said only after 30 minutes, and a drain that
timed out on a budget-protected pod sent the operator to the driver pod.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from gputui.actions.upgrade_node import HoldNode
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.upgrade_advice import HOLD, RELEASE, REQUEST, RETRY, why_not
from gputui.domain.upgrade_state import UpgradeState
from tests.domain import factory as f

_STATE = "nvidia.com/gpu-driver-upgrade-state"
_TRAINERS = f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=4, maxUnavailable="100%",
                             waitForCompletion={"podSelector": "app=trainer"})


def _node(name: str, state: str, **kw: Any) -> dict[str, Any]:
    return f.node(name, labels={_STATE: state}, **kw)


def _build(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], policy: dict[str, Any],
           since: float, **kw: Any) -> Any:
    times = {n["metadata"]["name"]: {_STATE: since} for n in nodes}
    cp = f.cluster_policy(**policy)
    return SnapshotBuilder().build(f.objects(nodes, pods, policies=[cp], label_times=times,
                                             **kw), f.T0)


def _named_actions(hint: str) -> set[str]:
    """The ``:`` commands a hint names."""
    return set(re.findall(r":([a-z][a-z-]+)", hint))


def _stuck_roll(since: float) -> Any:
    """Three nodes waiting for 31 h trainers (timeout never), one whose new driver crash-loops
    in pod-restart-required, five waiting for a slot: every slot holder is stuck."""
    waiting = [_node(f"w{i}", UpgradeState.WAIT_JOBS, cordoned=True) for i in range(3)]
    failing = [_node("x", UpgradeState.POD_RESTART, cordoned=True)]
    queue = [_node(f"r{i}", UpgradeState.REQUIRED) for i in range(5)]
    pods = [f.workload(f"trainer-{i}", f"w{i}") for i in range(3)]
    for node in waiting + queue:
        pods += f.healthy_pods(node["metadata"]["name"])
    pods += f.healthy_pods("x", overrides={"driver": {
        "crash_in": "nvidia-driver-ctr", "restarts": 5, "message": "kernel headers missing"}})
    return _build(waiting + failing + queue, pods, _TRAINERS, since)


def test_wait_for_jobs_hint_names_no_hold_for_a_node_that_has_started() -> None:
    """The node is past upgrade-required: the skip label no longer holds it, so the hint
    must not recommend it, and every action it names applies to the node."""
    snap = _stuck_roll(f.T0 - 5 * 60)
    (x,) = [x for x in snap.nodes["w0"].findings if x.code == "upgrade-stalled"]
    assert x.severity.value == "info"
    assert "Hold the node" not in x.hint and "=true instead" not in x.hint
    assert why_not(HOLD, UpgradeState.WAIT_JOBS, False) is not None
    assert "no longer helps" in x.hint and ":wait-for-completion" in x.hint
    node = snap.nodes["w0"]
    for action in _named_actions(x.hint) & {HOLD, RELEASE, RETRY, REQUEST}:
        assert why_not(action, node.upgrade_state, node.upgrade_skip) is None


def test_the_hold_dialog_and_the_hints_ask_one_place() -> None:
    """The hold plan's warning for a started node is the one place's answer, word for word."""
    snap = _stuck_roll(f.T0 - 5 * 60)
    plan = HoldNode().plan(snap, ["w0", "r0"], {})
    reason = why_not(HOLD, UpgradeState.WAIT_JOBS, False)
    assert plan.warnings == (f"w0 is {reason}",)
    assert why_not(HOLD, UpgradeState.REQUIRED, False) is None


def test_a_queue_whose_slot_holders_are_all_stuck_is_said_at_once() -> None:
    """At minute 5 the queue cannot move for hours: all 4 slots are held by nodes that do
    not move on by themselves. A warning (one holder's driver is failing), naming holders
    and the waiting nodes, not 25 minutes of info."""
    snap = _stuck_roll(f.T0 - 5 * 60)
    queue = [x for x in snap.findings if x.code == "upgrade-stalled" and x.node is None]
    (x,) = queue
    assert x.severity.value == "warning"
    assert x.nodes == tuple(f"r{i}" for i in range(5))
    assert "4 of 4 slots held" in x.message
    assert "3 wait for app=trainer (no timeout, oldest job 31 h): w0, w1, w2" in x.message
    assert "failing new driver: x" in x.message
    assert ":hold" in x.hint and "holding them no longer helps" in x.hint


def test_a_queue_behind_jobs_only_is_info_and_one_that_moves_is_not_said() -> None:
    """Held only by jobs waited for as configured: the policy's own doing, info. A holder
    whose wait times out moves on by itself: nothing said before the threshold."""
    waiting = [_node("w0", UpgradeState.WAIT_JOBS, cordoned=True)]
    queue = [_node("r0", UpgradeState.REQUIRED)]
    pods = [f.workload("trainer-0", "w0"), *f.healthy_pods("w0"), *f.healthy_pods("r0")]
    policy = f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=1, maxUnavailable="100%",
                              waitForCompletion={"podSelector": "app=trainer"})
    snap = _build(waiting + queue, pods, policy, f.T0 - 5 * 60)
    (x,) = [x for x in snap.findings if x.code == "upgrade-stalled" and x.node is None]
    assert x.severity.value == "info" and x.nodes == ("r0",)
    timed = f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=1, maxUnavailable="100%",
                             waitForCompletion={"podSelector": "app=trainer",
                                                "timeoutSeconds": 3600})
    snap = _build(waiting + queue, pods, timed, f.T0 - 5 * 60)
    assert [x for x in snap.findings if x.code == "upgrade-stalled" and x.node is None] == []


def test_a_drain_that_timed_out_on_a_budget_names_the_pod_not_the_driver() -> None:
    """``upgrade-failed`` after ``error when evicting ... global timeout reached``: the pod
    whose eviction was refused until the timeout is the cause, named with what it is."""
    node = _node("a", UpgradeState.FAILED, cordoned=True)
    pods = [*f.healthy_pods("a"), f.workload("trainer-llama-bmrsx", "a",
                                              namespace="ml-training")]
    events = [f.upgrade_event("a", "Successfully updated node state label to drain-required",
                              f.T0 - 900),
              f.upgrade_event("a", 'Failed to drain the node, error when evicting pods/'
                              '"trainer-llama-bmrsx" -n "ml-training": global timeout reached: '
                              "5m0s", f.T0 - 600, "Warning"),
              f.upgrade_event("a", "Successfully updated node state label to upgrade-failed",
                              f.T0 - 600)]
    snap = _build([node], pods, _TRAINERS, f.T0 - 600, events=events)
    (x,) = [x for x in snap.findings if x.code == "upgrade-failed"]
    assert not x.hint.startswith("Check the driver pod")
    assert "The driver is not the cause" in x.hint
    assert ("pod ml-training/trainer-llama-bmrsx (app=trainer, Job trainer, 8 GPUs, still "
            "on the node) was never evicted") in x.hint
    assert "PodDisruptionBudget" in x.hint and "kubectl get pdb -n ml-training" in x.hint
    assert ":retry-upgrade" in x.hint
    assert why_not(RETRY, UpgradeState.FAILED, False) is None


@pytest.mark.parametrize("state", list(UpgradeState))
def test_every_state_has_one_answer_per_action(state: str) -> None:
    """Hold applies exactly before a node starts; retry exactly to a failed node."""
    assert (why_not(HOLD, state, False) is None) == (state in (
        UpgradeState.UNKNOWN, UpgradeState.DONE, UpgradeState.REQUIRED))
    assert (why_not(RETRY, state, False) is None) == (state == UpgradeState.FAILED)
    assert why_not(HOLD, state, True) == "already held"
    assert why_not(RELEASE, state, True) is None
