"""Driver upgrade: the §4.5 slot formula and per-node wait reasons (§4.4)."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.upgrade import compute_slots, resolve_max_unavailable
from gputui.domain.upgrade_slots import Slots, needs_operator, waiting_for_slot
from tests.domain import factory as f


@pytest.mark.parametrize(("raw", "total", "expected"), [
    ("25%", 4, 1), ("25%", 5, 2), ("25%", 1, 1), ("10%", 30, 3), ("10%", 31, 4),
    ("100%", 7, 7), ("2", 10, 2), ("0%", 10, 0),
])
def test_max_unavailable_percent_rounds_up(raw: str, total: int, expected: int) -> None:
    assert resolve_max_unavailable(raw, total) == expected


def test_failed_nodes_consume_parallel_slots() -> None:
    states = {"a": "upgrade-failed", "b": "wait-for-jobs-required", "c": "upgrade-required",
              "d": "upgrade-required", "e": "upgrade-done"}
    slots = compute_slots(states, [], max_parallel=2, max_unavailable_raw="100%")
    assert slots.total == 5 and slots.in_progress == 2 and slots.available == 0


def test_unlimited_parallel_offers_every_required_node() -> None:
    states = {n: "upgrade-required" for n in "abcd"} | {"e": "upgrade-done"}
    slots = compute_slots(states, [], max_parallel=0, max_unavailable_raw="100%")
    assert slots.available == 4


def test_unavailable_at_limit_gives_zero_slots() -> None:
    states = {n: "upgrade-required" for n in "abcdefgh"}
    slots = compute_slots(states, ["a", "b"], max_parallel=4, max_unavailable_raw="25%")
    assert slots.max_unavailable == 2 and slots.unavailable == 2 and slots.available == 0


def test_slots_trimmed_to_max_unavailable() -> None:
    states = {n: "upgrade-required" for n in "abcdefgh"}
    slots = compute_slots(states, ["a"], max_parallel=4, max_unavailable_raw="50%")
    assert slots.max_unavailable == 4 and slots.available == 3


def test_cordon_required_counts_as_unavailable() -> None:
    states = {"a": "cordon-required", "b": "upgrade-required", "c": "upgrade-required",
              "d": "upgrade-required"}
    slots = compute_slots(states, [], max_parallel=4, max_unavailable_raw="25%")
    assert slots.unavailable == 1 and slots.max_unavailable == 1 and slots.available == 0


def test_in_progress_over_parallel_never_negative() -> None:
    states = {"a": "drain-required", "b": "validation-required", "c": "upgrade-required"}
    assert compute_slots(states, [], 1, "100%").available == 0


# --- end to end through the builder -------------------------------------------------------

def _node(name: str, state: str, **kw: Any) -> dict[str, Any]:
    return f.node(name, labels={"nvidia.com/gpu-driver-upgrade-state": state}, **kw)


def _build(nodes: list[dict[str, Any]], pods: list[dict[str, Any]] | None = None,
           policy: dict[str, Any] | None = None, **kw: Any) -> Any:
    all_pods = list(pods or [])
    for node in nodes:
        all_pods += f.healthy_pods(node["metadata"]["name"])
    cp = f.cluster_policy(**(policy or {}))
    objs = f.objects(nodes, all_pods, policies=[cp], **kw)
    return SnapshotBuilder().build(objs, f.T0)


def test_journey_2_lanes_slots_and_reasons() -> None:
    nodes = [_node("w1", "wait-for-jobs-required"), _node("w2", "wait-for-jobs-required"),
             _node("w3", "wait-for-jobs-required"), _node("x1", "upgrade-failed", cordoned=True)]
    nodes += [_node(f"r{i}", "upgrade-required") for i in range(20)]
    trainers = [f.workload("trainer-a", "w1", start=f.T0 - 31 * 3600),
                f.workload("trainer-b", "w1", start=f.T0 - 2 * 3600),
                f.workload("other", "w1", labels={"app": "notebook"})]
    policy = f.upgrade_policy(maxParallelUpgrades=4, maxUnavailable="25%",
                              waitForCompletion={"podSelector": "app=trainer"})
    event = f.upgrade_event("x1", "Failed to drain the node, timeout", f.T0 - 600, "Warning")
    snap = _build(nodes, trainers, policy, events=[event])
    view = snap.upgrade
    assert view.total == 24 and view.in_progress == 4 and view.failed == 1
    assert view.available_slots == 0
    assert view.slot_line == "4 of 4 in use (1 failed)"
    assert view.lanes["wait-for-jobs-required"] == ("w1", "w2", "w3")
    assert len(view.lanes["upgrade-required"]) == 20
    assert next(iter(view.lanes)) == "upgrade-required"
    assert view.nodes["w1"].wait_reason == (
        "2 pods app=trainer still running (oldest 31 h), timeout: never")
    assert view.nodes["r0"].wait_reason == "waiting for a slot (4 of 4 in use, 1 failed)"
    assert "Failed to drain the node" in view.nodes["x1"].wait_reason
    assert view.nodes["x1"].last_event is not None
    assert view.policy is not None and view.policy.describe() == (
        "maxParallelUpgrades 4, maxUnavailable 25%, waitForCompletion app=trainer "
        "(never times out)")


def test_skip_label_holds_the_node() -> None:
    nodes = [f.node("a", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                 "nvidia.com/gpu-driver-upgrade.skip": "true"})]
    view = _build(nodes).upgrade
    assert view.nodes["a"].wait_reason == "held: nvidia.com/gpu-driver-upgrade.skip=true"
    assert view.nodes["a"].skip


def test_maxunavailable_reason_names_the_unavailable_nodes() -> None:
    nodes = [_node("a", "upgrade-done", ready=False), _node("b", "upgrade-required"),
             _node("c", "upgrade-required"), _node("d", "upgrade-required")]
    view = _build(nodes, policy=f.upgrade_policy(maxParallelUpgrades=2)).upgrade
    assert view.unavailable == 1 and view.max_unavailable == 1
    assert view.nodes["b"].wait_reason == (
        "waiting for a slot (1 of 1 nodes unavailable, maxUnavailable 25%)")


def test_already_cordoned_node_proceeds_without_slot() -> None:
    nodes = [_node("a", "drain-required"), _node("b", "upgrade-required", cordoned=True)]
    view = _build(nodes).upgrade
    assert view.nodes["b"].wait_reason == "no slot, but already cordoned: proceeds anyway"


def test_free_slot_reason() -> None:
    view = _build([_node("a", "upgrade-required"), _node("b", "upgrade-done")]).upgrade
    assert view.available_slots == 1
    assert view.nodes["a"].wait_reason.startswith("slot free (1 available)")
    nodes = [_node(n, "upgrade-required") for n in "abcd"]
    view = _build(nodes, policy=f.upgrade_policy(maxUnavailable="100%")).upgrade
    assert view.nodes["a"].wait_reason.startswith("1 slot(s) free for 4 waiting nodes")


def test_wait_for_jobs_timeout_from_annotation() -> None:
    start = f.T0 - 600
    nodes = [_node("a", "wait-for-jobs-required", annotations={
        "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time": str(int(start))})]
    policy = f.upgrade_policy(waitForCompletion={"podSelector": "app=trainer",
                                                 "timeoutSeconds": 3600})
    view = _build(nodes, [f.workload("t", "a", start=f.T0 - 7200)], policy).upgrade
    assert view.nodes["a"].wait_reason == (
        "1 pod app=trainer still running (oldest 2 h), timeout: in 50 min")


def test_terminating_job_pod_still_holds_the_node() -> None:
    """k8s-operator-libs ``pkg/upgrade/pod_manager.go`` (``ScheduleCheckOnPodCompletion``,
    ``IsPodRunningOrPending``) judges pods by phase alone: a pod being deleted whose phase is
    still Running holds the node in wait-for-jobs-required, and waiting is expected."""
    nodes = [_node("a", "wait-for-jobs-required", cordoned=True)]
    pod = f.workload("trainer-0", "a", start=f.T0 - 2 * 3600)
    pod["metadata"]["deletionTimestamp"] = f.iso(f.T0 - 30)
    policy = f.upgrade_policy(autoUpgrade=True, waitForCompletion={"podSelector": "app=trainer"})
    snap = _build(nodes, pods=[pod], policy=policy)
    assert snap.upgrade.nodes["a"].wait_reason == (
        "1 pod app=trainer still running (terminating, oldest 2 h), timeout: never")
    (x,) = [x for x in snap.findings if x.code == "upgrade-stalled"]
    assert x.severity.value == "info" and "as waitForCompletion configures" in x.message
    # a second, live pod: the count says which of them is ending
    other = f.workload("trainer-1", "a", start=f.T0 - 3600)
    reason = _build(nodes, pods=[pod, other], policy=policy).upgrade.nodes["a"].wait_reason
    assert reason.startswith("2 pods app=trainer still running (1 terminating, oldest 2 h)")
    # Succeeded is finished, deletionTimestamp or not
    pod["status"]["phase"] = "Succeeded"
    reason = _build(nodes, pods=[pod], policy=policy).upgrade.nodes["a"].wait_reason
    assert reason == "no pod app=trainer running: moves on next cycle"


def test_wait_for_jobs_timeout_runs_out_after_its_last_second() -> None:
    """``HandleTimeoutOnPodCompletions`` moves on when now > start + timeoutSeconds."""
    start = f.T0 - 3600
    nodes = [_node("a", "wait-for-jobs-required", cordoned=True, annotations={
        "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time": str(int(start))})]
    policy = f.upgrade_policy(autoUpgrade=True, waitForCompletion={
        "podSelector": "app=trainer", "timeoutSeconds": 3600})
    snap = _build(nodes, [f.workload("t", "a")], policy)
    (x,) = [x for x in snap.findings if x.code == "upgrade-stalled"]
    assert x.severity.value == "info"


def test_validation_required_time_left() -> None:
    nodes = [_node("a", "validation-required", annotations={
        "nvidia.com/gpu-driver-upgrade-validation-start-time": str(int(f.T0 - 180))})]
    pods = [f.operand_pod("operator-validator", "a", stuck_in="plugin-validation",
                          suffix="zz")]
    objs_pods = [p for p in f.healthy_pods("a") if "validator" not in p["metadata"]["name"]]
    snap = SnapshotBuilder().build(f.objects(nodes, objs_pods + pods), f.T0)
    assert snap.upgrade.nodes["a"].wait_reason == (
        "validator: waiting in init container plugin-validation; 7 min left of 600 s")


def test_pod_restart_reason_counts_toward_ten() -> None:
    nodes = [_node("a", "pod-restart-required")]
    pods = [f.operand_pod("driver", "a", crash_in="nvidia-driver-ctr", restarts=4, suffix="d")]
    rest = [p for p in f.healthy_pods("a") if "driver" not in p["metadata"]["name"]]
    snap = SnapshotBuilder().build(f.objects(nodes, rest + pods), f.T0)
    reason = snap.upgrade.nodes["a"].wait_reason
    assert "CrashLoopBackOff in nvidia-driver-ctr" in reason
    assert "4 restarts, fails after 10" in reason


def test_blocked_when_the_driver_daemonset_owns_fewer_pods_than_desired() -> None:
    """k8s-operator-libs ``pkg/upgrade/upgrade_state.go`` BuildState: desiredNumberScheduled
    is compared with every pod the DaemonSet owns; fewer stops the whole cycle."""
    nodes = [_node("a", "upgrade-required"), _node("b", "upgrade-done")]
    ds = f.daemonset("nvidia-driver-daemonset", desired=3, current=2,
                     operand_component="nvidia-driver")
    snap = _build(nodes, daemonsets=[ds])
    view = snap.upgrade
    assert view.blocked is not None and "owns 2 pods for 3 desired" in view.blocked
    assert view.nodes["a"].wait_reason.startswith("blocked: driver DaemonSet")
    assert any(x.code == "upgrade-blocked" for x in snap.findings)


def test_pending_driver_pod_without_a_node_counts_as_owned() -> None:
    """BuildState counts a Pending pod with no node as owned, then skips it: a NotReady
    node whose driver pod cannot land does not block the others (gpu-operator #688 fixed)."""
    nodes = [_node("a", "upgrade-required"), _node("b", "upgrade-done")]
    ds = f.daemonset("nvidia-driver-daemonset", desired=3, current=2,
                     operand_component="nvidia-driver")
    pending = f.operand_pod("driver", "c", suffix="pend")
    pending["spec"].pop("nodeName")
    pending["status"] = {"phase": "Pending"}
    snap = _build(nodes, pods=[pending], daemonsets=[ds])
    assert snap.upgrade.blocked is None
    assert not any(x.code == "upgrade-blocked" for x in snap.findings)


def test_max_unavailable_string_that_is_not_a_percentage_is_rejected() -> None:
    """intstr.GetScaledValueFromIntOrPercent (used by k8s-operator-libs) rejects "2" as a
    string: the controller errors every cycle, nothing moves."""
    nodes = [_node("a", "upgrade-required"), _node("b", "upgrade-done")]
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxUnavailable="2"))
    assert snap.upgrade.blocked is not None and "'2'" in snap.upgrade.blocked
    assert snap.upgrade.available_slots == 0
    ok = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxUnavailable=2))
    assert ok.upgrade.blocked is None


def test_max_unavailable_zeroes_slots_at_any_node_count() -> None:
    """k8s-operator-libs ``pkg/upgrade/common_manager.go`` ``GetUpgradesAvailable``: slots are
    capped at maxUnavailable and become 0 whenever unavailable >= maxUnavailable; only the
    trim to what is left needs maxUnavailable below the node count."""
    states = {"a": "upgrade-required", "b": "upgrade-required"}
    # maxUnavailable 2 = total, both down: 2 >= 2, no slot
    assert compute_slots(states, ["a", "b"], max_parallel=2, max_unavailable_raw="2").available == 0
    assert compute_slots(states | {"c": "upgrade-done"}, ["a", "b"], 2, "2").available == 0
    # one down of maxUnavailable 2 = total: no trim (2 is not below 2), capped at 2
    assert compute_slots(states, ["a"], max_parallel=0, max_unavailable_raw="2").available == 2
    # below the total the trim applies: 3 nodes, maxUnavailable 2, one down -> 1
    assert compute_slots(states | {"c": "upgrade-done"}, ["a"], 0, "2").available == 1


@pytest.mark.parametrize(("states", "down", "parallel", "raw", "expected"), [
    ({"a": "upgrade-required"}, ["a"], 1, "100%", 0),        # one node, NotReady
    ({"a": "upgrade-required"}, [], 1, "100%", 1),
    ({"a": "upgrade-required"}, ["a"], 0, "25%", 0),
    ({n: "upgrade-required" for n in "abcd"}, [], 0, "100%", 4),
    ({n: "upgrade-required" for n in "abcd"}, [], 0, "2", 2),   # capped at maxUnavailable
    ({n: "upgrade-required" for n in "abcd"}, [], 8, "100%", 4),  # capped, total = 4
    ({n: "upgrade-required" for n in "abcd"}, ["a", "b", "c", "d"], 8, "100%", 0),
    ({n: "upgrade-required" for n in "abcd"}, ["a"], 0, "50%", 1),  # trimmed: 2 - 1
    ({"a": "cordon-required", "b": "upgrade-required"}, [], 0, "1", 0),  # about to cordon
    ({"a": "upgrade-required"}, [], 1, "0%", 0),
])
def test_slot_formula_as_upstream(states: dict[str, str], down: list[str], parallel: int,
                                  raw: str, expected: int) -> None:
    """``GetUpgradesAvailable`` (k8s-operator-libs ``pkg/upgrade/common_manager.go``)."""
    assert compute_slots(states, down, parallel, raw).available == expected


def test_one_node_cluster_not_ready_reads_no_slot() -> None:
    """The "why it waits" of a one-node cluster whose node is NotReady: no slot, not
    "slot free" (``GetUpgradesAvailable`` zeroes slots at unavailable >= maxUnavailable)."""
    nodes = [_node("a", "upgrade-required", ready=False)]
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxUnavailable="100%"))
    assert snap.upgrade.available_slots == 0
    assert snap.upgrade.nodes["a"].wait_reason.startswith(
        "waiting for a slot (1 of 1 nodes unavailable")


def _stalled(snap: Any) -> list[Any]:
    return [x for x in snap.findings if x.code == "upgrade-stalled"]


def _long(nodes: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {n["metadata"]["name"]: {"nvidia.com/gpu-driver-upgrade-state": f.T0 - 3 * 3600}
            for n in nodes}


def test_required_held_by_the_skip_label_is_info_held_by_choice() -> None:
    """``ProcessUpgradeRequiredNodes`` (k8s-operator-libs ``pkg/upgrade/upgrade_inplace.go``)
    skips nodes labelled gpu-driver-upgrade.skip=true, and gputui's own hint recommends the
    label: info, "held by choice since" the label's managedFields time."""
    nodes = [f.node("a", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                 "nvidia.com/gpu-driver-upgrade.skip": "true"})]
    times = {"a": {"nvidia.com/gpu-driver-upgrade-state": f.T0 - 3 * 3600,
                   "nvidia.com/gpu-driver-upgrade.skip": f.T0 - 5 * 3600}}
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True), label_times=times)
    (x,) = _stalled(snap)
    assert x.node == "a" and x.severity.value == "info"
    assert f"held by choice since {f.iso(f.T0 - 5 * 3600)[:16].replace('T', ' ')} UTC (5 h)" \
        in x.message
    assert x in snap.nodes["a"].findings  # the node's own: its row shows it
    # without a managedFields time for the label, it says no time
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True))
    (x,) = _stalled(snap)
    assert x.severity.value == "info" and "a held by choice: " in x.message


def test_a_stalled_queue_is_one_cluster_finding_listing_its_nodes() -> None:
    """``GetUpgradesInProgress`` (k8s-operator-libs ``pkg/upgrade/common_manager.go``) counts
    upgrade-failed nodes: they hold slots, so the whole queue behind them stalls. Said once,
    at cluster level, with every waiting node listed; a held node is not in the queue."""
    nodes = [_node("a", "upgrade-failed", cordoned=True), _node("b", "upgrade-required"),
             _node("c", "upgrade-required"), _node("d", "upgrade-required"),
             f.node("e", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                 "nvidia.com/gpu-driver-upgrade.skip": "true"})]
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=1,
                                                 maxUnavailable="100%"),
                  label_times=_long(nodes))
    warned = [x for x in _stalled(snap) if x.severity.value == "warning"]
    (x,) = warned
    assert x.node is None and x.nodes == ("b", "c", "d")
    assert x.message.startswith("upgrade queue stalled: 1 of 1 slots held by 1 failed node; "
                                "3 nodes waiting in upgrade-required (longest 3 h")
    assert x.message.endswith(": b, c, d") and x.pane == "upgrade"
    assert [y.node for y in _stalled(snap) if y.severity.value == "info"] == ["e"]


def test_queue_stalled_by_nodes_down_outside_the_upgrade() -> None:
    """``GetUpgradesAvailable`` gives 0 slots once unavailable nodes reach maxUnavailable,
    whatever the node count: nodes cordoned or NotReady for other reasons stall the queue
    even with maxUnavailable equal to the node count."""
    nodes = [_node("a", "upgrade-done", cordoned=True), _node("b", "upgrade-required",
                                                              ready=False)]
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxUnavailable=2),
                  label_times=_long(nodes))
    (x,) = _stalled(snap)
    assert x.node is None and x.nodes == ("b",) and x.severity.value == "warning"
    assert ("maxUnavailable 2 used up by 2 node(s) cordoned or NotReady outside the upgrade "
            "(a, b)") in x.message


def test_required_queued_behind_a_progressing_node_is_normal() -> None:
    """A queue behind nodes upgrading within maxParallelUpgrades is a roll's normal life."""
    nodes = [_node("a", "validation-required", cordoned=True), _node("b", "upgrade-required")]
    times = _long([nodes[1]]) | {"a": {"nvidia.com/gpu-driver-upgrade-state": f.T0 - 60}}
    snap = _build(nodes, policy=f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=1),
                  label_times=times)
    assert _stalled(snap) == []


def test_no_driver_no_upgrade_view() -> None:
    cp = f.cluster_policy(spec={"driver": {"enabled": False}})
    objs = f.objects([f.node("a")], f.healthy_pods("a", operands=["container-toolkit"]),
                     policies=[cp])
    view = SnapshotBuilder().build(objs, f.T0).upgrade
    assert view.policy is None and view.total == 0


def test_nvidiadriver_policy_wins_when_crd_used() -> None:
    cp = f.cluster_policy(spec={"driver": {"useNvidiaDriverCRD": True}})
    nvd = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
           "metadata": {"name": "default"},
           "spec": {"default": True, "upgradePolicy": {"maxParallelUpgrades": 3}}}
    objs = f.objects([_node("a", "upgrade-done")], f.healthy_pods("a"), policies=[cp],
                     nvidia_drivers=[nvd])
    view = SnapshotBuilder().build(objs, f.T0).upgrade
    assert view.policy is not None and view.policy.max_parallel_upgrades == 3
    assert view.policy.auto_upgrade and view.policy.source == "NVIDIADriver default"


def test_outdated_driver_pod_is_named() -> None:
    """Told by controller-revision-hash as upstream (see test_driver_revision.py): node b's
    pod was made from the current template (generation 3), so its hash is current."""
    ds = f.daemonset("nvidia-driver-daemonset", desired=2, operand_component="nvidia-driver")
    ds["metadata"]["generation"] = 3
    ds["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "3"}
    ds["status"]["observedGeneration"] = 3
    pods = f.healthy_pods("a") + f.healthy_pods("b")
    for pod in pods:
        if pod["metadata"]["labels"]["app"] == "nvidia-driver-daemonset":
            old = pod["spec"]["nodeName"] == "a"
            pod["metadata"]["labels"]["pod-template-generation"] = "2" if old else "3"
            pod["metadata"]["labels"]["controller-revision-hash"] = "5d7f" if old else "6c9b"
    nodes = [_node("a", "upgrade-done"), _node("b", "upgrade-done")]
    snap = SnapshotBuilder().build(f.objects(nodes, pods, daemonsets=[ds]), f.T0)
    assert snap.nodes["a"].driver_outdated is True and snap.nodes["b"].driver_outdated is False
    assert snap.upgrade.nodes["a"].wait_reason.startswith("driver pod out of date")
    assert snap.upgrade.nodes["b"].wait_reason == ""


def test_wait_for_jobs_counts_every_selected_pod_not_only_gpu_pods() -> None:
    """``ProcessWaitForJobsRequiredNodes`` lists the node's pods by the podSelector alone
    (k8s-operator-libs ``pkg/upgrade/upgrade_state.go``): a CPU-only pod holds the node."""
    nodes = [_node("a", "wait-for-jobs-required", cordoned=True)]
    etl = f.workload("etl-0", "a", labels={"app": "etl"})
    etl["spec"]["containers"][0]["resources"] = {}
    policy = f.upgrade_policy(autoUpgrade=True, waitForCompletion={"podSelector": "app=etl"})
    snap = _build(nodes, pods=[etl], policy=policy)
    assert snap.upgrade.nodes["a"].wait_reason.startswith("1 pod app=etl still running")
    stalled = [x for x in snap.findings if x.code == "upgrade-stalled"]
    assert stalled and stalled[0].severity.value == "info"


def _nvd(name: str, **policy: Any) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
            "metadata": {"name": name}, "spec": {"upgradePolicy": policy}}


def test_slots_are_counted_per_nvidiadriver() -> None:
    """gpu-operator v26.7 runs one upgrade per NVIDIADriver over the nodes it owns
    (``internal/nvidiadriver/nvidiadriver.go`` AssignOwners, owner label), each with its own
    maxParallelUpgrades: a node never waits for another CR's slot."""
    owner = "nvidia.com/gpu-operator.driver.owner"
    nodes = [f.node("a1", labels={"nvidia.com/gpu-driver-upgrade-state": "validation-required",
                                  owner: "a"}, cordoned=True),
             f.node("a2", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                  owner: "a"}),
             f.node("b1", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                  owner: "b"})]
    cp = f.cluster_policy(spec={"driver": {"useNvidiaDriverCRD": True}})
    pods = [p for n in ("a1", "a2", "b1") for p in f.healthy_pods(n)]
    drivers = [_nvd("a", maxParallelUpgrades=1, maxUnavailable="100%"),
               _nvd("b", maxParallelUpgrades=1, maxUnavailable="100%")]
    snap = SnapshotBuilder().build(f.objects(nodes, pods, policies=[cp],
                                             nvidia_drivers=tuple(drivers)), f.T0)
    view = snap.upgrade
    assert set(view.groups) == {"a", "b"}
    assert view.groups["a"].available_slots == 0 and view.groups["b"].available_slots == 1
    assert view.nodes["a2"].wait_reason == "waiting for a slot (1 of 1 in use)"
    assert view.nodes["b1"].wait_reason.startswith("slot free")


def test_stalled_queue_is_per_nvidiadriver() -> None:
    """One state machine per NVIDIADriver (gpu-operator ``internal/nvidiadriver``): a failed
    node of CR a stalls a's queue only, and the finding names the CR and its holders."""
    owner = "nvidia.com/gpu-operator.driver.owner"
    state = "nvidia.com/gpu-driver-upgrade-state"
    nodes = [f.node("a1", labels={state: "upgrade-failed", owner: "a"}, cordoned=True),
             f.node("a2", labels={state: "upgrade-required", owner: "a"}),
             f.node("b1", labels={state: "upgrade-required", owner: "b"})]
    cp = f.cluster_policy(spec={"driver": {"useNvidiaDriverCRD": True}})
    pods = [p for n in ("a1", "a2", "b1") for p in f.healthy_pods(n)]
    drivers = [_nvd("a", autoUpgrade=True, maxParallelUpgrades=1, maxUnavailable="100%"),
               _nvd("b", autoUpgrade=True, maxParallelUpgrades=1, maxUnavailable="100%")]
    snap = SnapshotBuilder().build(f.objects(nodes, pods, policies=[cp],
                                             nvidia_drivers=tuple(drivers),
                                             label_times=_long(nodes)), f.T0)
    (x,) = [x for x in _stalled(snap) if x.severity.value == "warning"]
    assert x.node is None and x.nodes == ("a2",)
    assert x.message.startswith("upgrade queue stalled (NVIDIADriver a): 1 of 1 slots held by "
                                "1 failed node; 1 node waiting")


def test_waiting_for_a_slot_is_not_blocked_unless_an_operator_must_act() -> None:
    """A node behind upgrading nodes waits its turn ("waiting for a slot (1 of 1 in use)",
    nothing to fix); slots held by a failed node, or maxUnavailable used up by nodes down
    outside the upgrade, do not free themselves (k8s-operator-libs
    ``pkg/upgrade/common_manager.go``, ``GetUpgradesAvailable``): those need an operator."""
    rest = {n: "upgrade-required" for n in "bcd"}
    busy = compute_slots({"a": "drain-required", **rest}, ["a"], 1, "50%")
    assert busy.available == 0 and needs_operator(busy, 0) is None
    assert _waiting(busy, "50%") == "waiting for a slot (1 of 1 in use)"
    held = compute_slots({"a": "upgrade-failed", **rest}, [], 1, "50%")
    assert _waiting(held, "50%") == "waiting for a slot (1 of 1 in use, 1 failed)"
    assert needs_operator(held, 0) == "1 upgrade-failed node holds its slot until fixed"
    down = compute_slots({"a": "upgrade-done", "b": "upgrade-done", "c": "upgrade-required",
                          "d": "upgrade-required"}, ["a", "b"], 2, "50%")
    assert _waiting(down, "50%") == (
        "waiting for a slot (2 of 2 nodes unavailable, maxUnavailable 50%)")
    assert needs_operator(down, 2) == (
        "maxUnavailable used up by 2 node(s) cordoned or NotReady outside the upgrade")
    assert needs_operator(down, 1) is None


def _waiting(slots: Slots, raw: str) -> str:
    return waiting_for_slot(slots.in_progress, slots.max_parallel, slots.failed,
                            slots.unavailable, slots.max_unavailable, raw)
