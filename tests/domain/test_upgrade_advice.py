"""Upgrade advice names only what applies to the node's state (issue 29 item 4).

Each test here failed on the code before: the wait-for-jobs hint recommended the skip label
for a node already past ``upgrade-required`` (the hold dialog then said it would not help),
a queue whose every slot holder was stuck was said only after 30 minutes, and a drain that
timed out on a budget-protected pod sent the operator to the driver pod.
"""

from __future__ import annotations

import re
from dataclasses import replace
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


_HELD = "trainer-llama-bmrsx"


def _budget(name: str = "trainer-llama-pdb", namespace: str = "ml-training",
            selector: Any = None, allowed: int | None = 0, healthy: int = 1,
            needed: int = 1) -> dict[str, Any]:
    """A PodDisruptionBudget as the sources keep it (reduced), ``app=trainer`` by default."""
    status = ({} if allowed is None else {"disruptionsAllowed": allowed,
                                          "currentHealthy": healthy, "desiredHealthy": needed})
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": "7"},
            "spec": {"minAvailable": needed, "selector": {"matchLabels": {"app": "trainer"}}
                     if selector is None else selector}, "status": status}


def _drain_inputs(with_pod: bool = True, **kw: Any) -> Any:
    """Node ``a`` failed its drain on the trainer's eviction (kubectl's drain helper's
    "global timeout reached"); ``kw``: the budgets, unreadable, loading of the input."""
    node = _node("a", UpgradeState.FAILED, cordoned=True)
    pods = [*f.healthy_pods("a")] + ([f.workload(_HELD, "a", namespace="ml-training")]
                                     if with_pod else [])
    events = [f.upgrade_event("a", "Successfully updated node state label to drain-required",
                              f.T0 - 900),
              f.upgrade_event("a", 'Failed to drain the node, error when evicting pods/'
                              f'"{_HELD}" -n "ml-training": global timeout reached: '
                              "5m0s", f.T0 - 600, "Warning"),
              f.upgrade_event("a", "Successfully updated node state label to upgrade-failed",
                              f.T0 - 600)]
    return f.objects([node], pods, policies=[f.cluster_policy(**_TRAINERS)],
                     label_times={"a": {_STATE: f.T0 - 600}}, events=events, **kw)


def _drain_timed_out(with_pod: bool = True, **kw: Any) -> Any:
    return SnapshotBuilder().build(_drain_inputs(with_pod, **kw), f.T0)


def _failed_hint(snap: Any) -> str:
    (x,) = [x for x in snap.findings if x.code == "upgrade-failed"]
    return str(x.hint)


def test_a_drain_that_timed_out_on_a_budget_names_the_pod_not_the_driver() -> None:
    """``upgrade-failed`` after ``error when evicting ... global timeout reached``: the pod
    whose eviction was refused until the timeout is the cause, named with what it is. No
    budget list in the input (a recording made before gputui read budgets): the hint says
    the budget is not known and how to find it, never that there is none."""
    hint = _failed_hint(_drain_timed_out())
    assert not hint.startswith("Check the driver pod")
    assert "The driver is not the cause" in hint
    assert (f"pod ml-training/{_HELD} (app=trainer, Job trainer, 8 GPUs, still "
            "on the node) was never evicted") in hint
    assert "PodDisruptionBudget" in hint and "kubectl get pdb -n ml-training" in hint
    assert "which budget is not known: PodDisruptionBudgets were not read" in hint
    assert ":retry-upgrade" in hint
    assert why_not(RETRY, UpgradeState.FAILED, False) is None


def test_the_failure_names_the_budget_that_held_the_pod() -> None:
    """Issue 29 item 4: the budget that selects the held pod is named with what it allows
    now, and the hint says what to change on it instead of sending the operator to find it.
    A budget of another namespace with the same selector is not it."""
    budgets = (_budget(), _budget("elsewhere", "ml"))
    hint = _failed_hint(_drain_timed_out(disruption_budgets=budgets))
    assert (f"pod ml-training/{_HELD} (app=trainer, Job trainer, 8 GPUs, still on the node) "
            "was never evicted: PodDisruptionBudget ml-training/trainer-llama-pdb "
            "(app=trainer) allows 0 disruptions (needs 1 healthy pod, has 1), and its "
            "eviction was refused until the 5m0s timeout") in hint
    assert ("End or move that job, or let ml-training/trainer-llama-pdb allow a disruption "
            "(it sets minAvailable 1), then retry (:retry-upgrade") in hint
    assert "kubectl get pdb" not in hint and "ml/elsewhere" not in hint


@pytest.mark.parametrize(("inputs", "said"), [
    ({"disruption_budgets": (), "unreadable": {"poddisruptionbudgets": "forbidden"}},
     "which budget is not known: PodDisruptionBudgets could not be read (403)"),
    ({"disruption_budgets": (), "unreadable": {"poddisruptionbudgets": "not-served"}},
     "which budget is not known: PodDisruptionBudgets could not be read (404)"),
    ({"disruption_budgets": (), "loading": frozenset({"poddisruptionbudgets"})},
     "which budget is not known: PodDisruptionBudgets are not read yet"),
])
def test_budgets_that_could_not_be_read_are_said_as_a_gap(inputs: dict[str, Any],
                                                          said: str) -> None:
    """Unknown is never "none": a refused, unserved or not yet listed budget list says so,
    and the hint keeps the way to find the budget."""
    hint = _failed_hint(_drain_timed_out(**inputs))
    assert said in hint and "kubectl get pdb -n ml-training" in hint
    assert "no PodDisruptionBudget read" not in hint


def test_no_budget_selecting_the_pod_is_said_as_read() -> None:
    """Budgets read and none selects the pod now (its budget removed since, or a budget of
    other pods): said as what was read, and a retry may pass."""
    other = _budget(selector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["inference"]}]})
    hint = _failed_hint(_drain_timed_out(disruption_budgets=(other,)))
    assert ("yet no PodDisruptionBudget read in ml-training selects it now (the budget may "
            "be gone, or the eviction was refused for another reason)") in hint
    assert "Nothing read holds it now, so retry" in hint


def test_two_budgets_selecting_the_pod_are_both_named() -> None:
    """The eviction subresource refuses a pod that two budgets select (500) whatever they
    allow: a drain waits that out too, and the hint says so."""
    budgets = (_budget(), _budget("all-of-ml-training", selector={}, allowed=3))
    hint = _failed_hint(_drain_timed_out(disruption_budgets=budgets))
    assert ("PodDisruptionBudgets ml-training/trainer-llama-pdb, "
            "ml-training/all-of-ml-training all select it") in hint
    assert "more than one budget selects" in hint


def test_a_budget_that_allows_a_disruption_now_says_retry() -> None:
    """The budget had none left when the drain ran and has one now (the trainer's peers
    are back): retry is what the hint says, not to change the budget."""
    hint = _failed_hint(_drain_timed_out(disruption_budgets=(_budget(allowed=1, healthy=2),)))
    assert ("PodDisruptionBudget ml-training/trainer-llama-pdb (app=trainer) allows 1 "
            "disruption (needs 1 healthy pod, has 2) now, though its eviction was refused") in hint
    assert "Its budget allows a disruption now, so retry (:retry-upgrade" in hint


def test_a_pod_not_read_is_matched_to_no_budget() -> None:
    """gputui reads GPU pods and the pods the upgrade waits for: a pod it did not read has
    no labels to match, so no budget is named as its own; the namespace's budgets out of
    disruptions are named as candidates."""
    budgets = (_budget(), _budget("roomy", allowed=2, healthy=3))
    hint = _failed_hint(_drain_timed_out(with_pod=False, disruption_budgets=budgets))
    assert ("its labels were not read (gputui reads GPU pods and the pods the upgrade waits "
            "for), so which budget selects it is not known (in ml-training, "
            "ml-training/trainer-llama-pdb allows no disruption now)") in hint
    assert "roomy" not in hint and "kubectl get pdb -n ml-training" in hint


def test_a_budget_change_alone_rebuilds_the_failed_node() -> None:
    """The node, its pods and its events are unchanged; only the budget's status moved (the
    trainer's peers came back). The builder is told no node changed, and the hint still
    follows the budget."""
    builder = SnapshotBuilder()
    base = _drain_inputs(disruption_budgets=(_budget(),))
    assert "allows 0 disruptions" in _failed_hint(builder.build(base, f.T0))
    moved = replace(base, disruption_budgets=(_budget(allowed=1, healthy=2),))
    assert "allows 1 disruption" in _failed_hint(builder.build(moved, f.T0 + 5,
                                                               changed_nodes=()))
    # a fork (a replay's parked builder) judges apart: the budget gone in one is news to
    # the other too, however far the first one got
    fork = builder.fork()
    gone = replace(moved, disruption_budgets=())
    assert "no PodDisruptionBudget read" in _failed_hint(fork.build(gone, f.T0 + 10,
                                                                    changed_nodes=()))
    assert "no PodDisruptionBudget read" in _failed_hint(builder.build(gone, f.T0 + 10,
                                                                       changed_nodes=()))


@pytest.mark.parametrize("state", list(UpgradeState))
def test_every_state_has_one_answer_per_action(state: str) -> None:
    """Hold applies exactly before a node starts; retry exactly to a failed node."""
    assert (why_not(HOLD, state, False) is None) == (state in (
        UpgradeState.UNKNOWN, UpgradeState.DONE, UpgradeState.REQUIRED))
    assert (why_not(RETRY, state, False) is None) == (state == UpgradeState.FAILED)
    assert why_not(HOLD, state, True) == "already held"
    assert why_not(RELEASE, state, True) is None
