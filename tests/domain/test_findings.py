"""Every finding rule of the contract, from fixtures shaped like real objects."""

from __future__ import annotations

from typing import Any

from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f


def build(nodes: list[dict[str, Any]] | None = None, pods: list[dict[str, Any]] | None = None,
          now: float = f.T0, **kw: Any) -> ClusterSnapshot:
    nodes = [f.node()] if nodes is None else nodes
    pods = f.healthy_pods() if pods is None else pods
    return SnapshotBuilder().build(f.objects(nodes, pods, **kw), now)


def only(snap: ClusterSnapshot, code: str) -> Finding:
    found = [x for x in snap.findings if x.code == code]
    assert len(found) == 1, [(x.code, x.message) for x in snap.findings]
    return found[0]


def codes(snap: ClusterSnapshot) -> set[str]:
    return {x.code for x in snap.findings}


def without(operand: str, node: str = f.NODE) -> list[dict[str, Any]]:
    return [p for p in f.healthy_pods(node) if p["metadata"]["labels"]["app"]
            != f.OPERAND_PODS[operand][0]]


def test_healthy_cluster_has_no_findings() -> None:
    snap = build()
    assert snap.findings == ()
    assert snap.nodes[f.NODE].worst is None


def test_cluster_policy_missing_is_critical() -> None:
    x = only(build(policies=[]), "cluster-policy-missing")
    assert x.severity is Severity.CRITICAL and x.node is None


def test_cluster_policy_forbidden_says_so() -> None:
    """Forbidden is not missing: no ``cluster-policy-missing``, an unknown state and a read
    gap that says what it hides (issue 18: a 403 read as "policy missing")."""
    snap = build(policies=[], forbidden=frozenset({"clusterpolicies"}))
    assert not [x for x in snap.findings if x.code == "cluster-policy-missing"]
    assert snap.cluster_policy.state == "unknown"
    assert [(g.resource, g.code, g.required) for g in snap.gaps] == [
        ("clusterpolicies", 403, True)]


def test_cluster_policy_not_ready_lists_states() -> None:
    cp = f.cluster_policy(status={"state": "notReady", "conditions": [
        {"type": "Ready", "status": "False", "reason": "Error", "message": ""},
        {"type": "Error", "status": "True", "reason": "OperandNotReady",
         "message": "ClusterPolicy is not ready; states not ready: [state-driver "
                    "state-operator-validation]"}]})
    snap = build(policies=[cp])
    assert snap.cluster_policy.not_ready_states == ("state-driver", "state-operator-validation")
    x = only(snap, "cluster-policy-not-ready")
    assert "state-driver" in x.message and x.severity is Severity.WARNING


def test_cluster_policy_ignored_duplicate() -> None:
    dup = f.cluster_policy(metadata={"name": "cluster-policy-2",
                                     "creationTimestamp": "2026-09-01T00:00:00Z"},
                           status={"state": "ignored"})
    snap = build(policies=[dup, f.cluster_policy()])
    assert snap.cluster_policy.name == "cluster-policy"
    x = only(snap, "cluster-policy-ignored")
    assert "cluster-policy-2" in x.message and x.severity is Severity.INFO


def test_node_not_ready() -> None:
    x = only(build([f.node(ready=False)]), "node-not-ready")
    assert x.node == f.NODE and "Kubelet stopped posting" in x.message


def test_gpus_unavailable_zero_is_critical() -> None:
    snap = build([f.node(allocatable=0)])
    x = only(snap, "gpus-unavailable")
    assert x.severity is Severity.CRITICAL and x.message.startswith("0 of 8 GPUs allocatable")
    assert snap.nodes[f.NODE].worst is Severity.CRITICAL


def test_gpus_unavailable_partial_is_warning() -> None:
    x = only(build([f.node(allocatable=7)]), "gpus-unavailable")
    assert x.severity is Severity.WARNING


def test_gpus_unavailable_capacity_below_gpu_count() -> None:
    x = only(build([f.node(gpus=6)]), "gpus-unavailable")
    assert "capacity 6 below the 8" in x.message


def test_sharing_replicas_raise_expected_capacity() -> None:
    labels = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
    assert "gpus-unavailable" not in codes(build([f.node(labels=labels, gpus=32)]))
    x = only(build([f.node(labels=labels, gpus=8)]), "gpus-unavailable")
    assert "below the 32" in x.message


def test_operand_paused_long_is_warning() -> None:
    labels = {"nvidia.com/gpu.deploy.device-plugin": "paused-for-driver-upgrade"}
    times = {f.NODE: {"nvidia.com/gpu.deploy.device-plugin": f.T0 - 3600}}
    x = only(build([f.node(labels=labels)], without("device-plugin"), label_times=times),
             "operand-paused")
    assert x.severity is Severity.WARNING
    assert "device-plugin=paused-for-driver-upgrade" in x.message and "1 h" not in x.message


def test_operand_paused_recent_during_driver_restart_is_info() -> None:
    labels = {"nvidia.com/gpu.deploy.device-plugin": "paused-for-driver-upgrade"}
    times = {f.NODE: {"nvidia.com/gpu.deploy.device-plugin": f.T0 - 60}}
    pods = without("device-plugin")
    for pod in pods:
        if pod["metadata"]["labels"]["app"] == "nvidia-driver-daemonset":
            # k8s-driver-manager paused the operands and the driver container restarted
            pod["status"]["containerStatuses"][0].update(
                ready=False, state={"running": {"startedAt": f.iso(f.T0 - 120)}})
    x = only(build([f.node(labels=labels)], pods, label_times=times), "operand-paused")
    assert x.severity is Severity.INFO
    assert "normal until 10:19 UTC" in x.message and "startup probe" in x.message


def test_driver_pod_failing_driver_in_use_hint() -> None:
    pods = without("driver") + [f.load("pod-driver-init-crashloop.json"),
                                f.workload("trainer-0")]
    x = only(build(pods=pods), "driver-pod-failing")
    assert x.severity is Severity.CRITICAL
    assert "Init:CrashLoopBackOff in k8s-driver-manager, 14 restarts" in x.message
    assert "driver is in use" in x.hint and "ml/trainer-0" in x.hint


def test_driver_pod_failing_kernel_hint() -> None:
    pod = f.operand_pod("driver", crash_in="nvidia-driver-ctr", restarts=6, suffix="k1",
                        message="Could not resolve Linux kernel version; unable to find "
                                "kernel headers for 6.8.0-1015-gcp")
    x = only(build(pods=without("driver") + [pod]), "driver-pod-failing")
    assert "kernel 6.1.112+" in x.hint and "precompiled" in x.hint


def test_driver_not_ready_too_long_is_warning() -> None:
    pod = f.operand_pod("driver", not_ready=True, start=f.T0 - 3600, suffix="n1")
    x = only(build(pods=without("driver") + [pod]), "driver-pod-failing")
    assert x.severity is Severity.WARNING


def test_operand_pod_failing_crashloop() -> None:
    pod = f.operand_pod("dcgm-exporter", crash_in="nvidia-dcgm-exporter", restarts=9,
                        suffix="e1", message="Failed to watch metrics: DCGM not initialized")
    x = only(build(pods=without("dcgm-exporter") + [pod]), "operand-pod-failing")
    assert x.subject == "dcgm-exporter" and "CrashLoopBackOff in nvidia-dcgm-exporter" in x.message
    assert x.severity is Severity.WARNING


def test_operand_pod_failing_only_for_first_broken_when_waiting() -> None:
    # toolkit stuck for an hour; plugin waits behind it: only the toolkit is reported
    pods = without("container-toolkit") + [f.operand_pod(
        "container-toolkit", stuck_in="driver-validation", start=f.T0 - 3600, suffix="t1")]
    x = only(build(pods=pods), "operand-pod-failing")
    assert x.subject == "container-toolkit" and "60 min" in x.message


def test_validator_stuck_names_init_container_and_layer() -> None:
    pods = without("operator-validator") + [f.load("pod-validator-cuda-validation.json"),
                                            f.load("pod-cuda-validator-pending.json")]
    x = only(build(pods=pods), "validator-stuck")
    assert "stuck in cuda-validation" in x.message and "CUDA layer" in x.message
    assert "Insufficient nvidia.com/gpu" in x.hint


def test_validator_crashloop_in_plugin_validation_reports_at_once() -> None:
    pod = f.operand_pod("operator-validator", crash_in="plugin-validation", restarts=5,
                        start=f.T0 - 30, suffix="v1",
                        message="GPU resources are not yet discovered by the node, retry: 30")
    x = only(build(pods=without("operator-validator") + [pod]), "validator-stuck")
    assert "plugin-validation" in x.message and "device plugin layer" in x.message


def test_validator_recent_is_not_stuck() -> None:
    pod = f.operand_pod("operator-validator", stuck_in="toolkit-validation", start=f.T0 - 60,
                        suffix="v2")
    assert "validator-stuck" not in codes(build(pods=without("operator-validator") + [pod]))


def test_upgrade_failed_with_event() -> None:
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"})
    x = only(build([node], events=[f.load("event-upgrade-failed.json")]), "upgrade-failed")
    assert "pods not managed by a controller" in x.message and x.pane == "upgrade"
    assert "upgrade-required" in x.hint


def test_upgrade_failed_after_its_events_expired_says_the_step_is_unknown() -> None:
    """Events last 1 h (kube-apiserver --event-ttl): the state label remains, the why does
    not, and the finding says so rather than guessing a step."""
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"})
    x = only(build([node], events=[]), "upgrade-failed")
    assert "step unknown" in x.message and "1 h" in x.message


def test_upgrade_failed_with_only_its_own_event_left_does_not_quote_it() -> None:
    """Only the move to upgrade-failed is left (k8s-operator-libs
    ``pkg/upgrade/node_upgrade_state_provider.go``: "Successfully updated node state label to
    %s"): the step is unknown, said so, not the label change quoted as the cause."""
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"})
    moved = f.merge(f.load("event-upgrade-failed.json"), {
        "type": "Normal", "message": "Successfully updated node state label to upgrade-failed"})
    x = only(build([node], events=[moved]), "upgrade-failed")
    assert "step unknown" in x.message and "Successfully updated" not in x.message


def test_upgrade_failed_without_events_infers_pod_restart_from_a_crashing_driver() -> None:
    """A driver container not ready after more than 10 restarts is what fails
    pod-restart-required (k8s-operator-libs ``pkg/upgrade/common_manager.go``,
    ``isDriverPodFailing``): with the events gone, the finding names that step as likely."""
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"})
    crashing = f.operand_pod("driver", crash_in="nvidia-driver-ctr", restarts=14, suffix="d1")
    x = only(build([node], without("driver") + [crashing], events=[]), "upgrade-failed")
    assert "restarted 14 times" in x.message and "pod-restart-required" in x.message
    calm = f.operand_pod("driver", crash_in="nvidia-driver-ctr", restarts=3, suffix="d2")
    x = only(build([node], without("driver") + [calm], events=[]), "upgrade-failed")
    assert "step unknown" in x.message and "pod-restart-required" not in x.message


def test_upgrade_stalled_after_threshold() -> None:
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "wait-for-jobs-required"})
    policy = f.cluster_policy(**f.upgrade_policy(waitForCompletion={"podSelector": "app=trainer"}))
    times = {f.NODE: {"nvidia.com/gpu-driver-upgrade-state": f.T0 - 2 * 3600}}
    pods = f.healthy_pods() + [f.workload("trainer-0")]
    # the trainer still runs and timeoutSeconds is 0: waiting is what the policy says
    x = only(build([node], pods, policies=[policy], label_times=times), "upgrade-stalled")
    assert "wait-for-jobs-required for 2 h" in x.message and "app=trainer" in x.message
    assert x.severity is Severity.INFO and "as waitForCompletion configures" in x.message
    # nothing selected runs any more, yet the node has sat there for 2 h: stalled
    x = only(build([node], f.healthy_pods(), policies=[policy], label_times=times),
             "upgrade-stalled")
    assert x.severity is Severity.WARNING and "past 30 min" in x.message
    times = {f.NODE: {"nvidia.com/gpu-driver-upgrade-state": f.T0 - 60}}
    assert "upgrade-stalled" not in codes(build([node], f.healthy_pods(), policies=[policy],
                                                label_times=times))


def test_upgrade_blocked_is_cluster_wide_and_critical_once_it_lasts() -> None:
    """Seen once it is info (BuildState retries every cycle; see test_upgrade_blocked.py),
    seen past the grace it is critical and leads the list."""
    ds = f.daemonset("nvidia-driver-daemonset", desired=2, current=1,
                     operand_component="nvidia-driver")
    builder = SnapshotBuilder()
    x = only(builder.build(f.objects([f.node()], f.healthy_pods(), daemonsets=[ds]), f.T0),
             "upgrade-blocked")
    assert x.severity is Severity.INFO and x.node is None
    snap = builder.build(f.objects([f.node()], f.healthy_pods(), daemonsets=[ds]), f.T0 + 600)
    x = only(snap, "upgrade-blocked")
    assert x.severity is Severity.CRITICAL and x.node is None
    assert snap.findings[0].code == "upgrade-blocked"


def test_mig_config_failed_points_at_mig_manager_log() -> None:
    node = f.node(labels={"nvidia.com/mig.config": "all-1g.10gb",
                          "nvidia.com/mig.config.state": "failed"})
    x = only(build([node]), "mig-config-failed")
    assert "all-1g.10gb" in x.message and "MIG manager log" in x.hint
    assert "nvidia-mig-manager-" in x.hint and x.pane == "mig"


def test_mig_config_pending_past_threshold() -> None:
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "pending",
              "nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change"}
    times = {f.NODE: {"nvidia.com/mig.config.state": f.T0 - 50 * 60}}
    snap = build([f.node(labels=labels, allocatable=0)], without("device-plugin"),
                 label_times=times)
    x = only(snap, "mig-config-pending")
    assert "pending for 50 min" in x.message and "device-plugin paused-for-mig-change" in x.message
    # still reported (the contract), saying the MIG change explains it, late past the grace
    paused = only(snap, "operand-paused")
    assert paused.severity is Severity.WARNING
    assert "the MIG change to all-1g.10gb is pending for 50 min" in paused.message
    # the GPUs are away because of the change: mig-config-pending carries the warning
    assert only(snap, "gpus-unavailable").severity is Severity.INFO


def test_mig_pending_recently_is_quiet() -> None:
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "pending"}
    times = {f.NODE: {"nvidia.com/mig.config.state": f.T0 - 60}}
    assert "mig-config-pending" not in codes(build([f.node(labels=labels)], label_times=times))


def test_daemonset_selecting_no_node() -> None:
    ds = f.daemonset("nvidia-device-plugin-daemonset", desired=0)
    x = only(build(daemonsets=[ds]), "daemonset-not-scheduled")
    assert "selects no node" in x.message and x.subject == "nvidia-device-plugin-daemonset"


def test_daemonset_with_unscheduled_pods() -> None:
    ds = f.daemonset("nvidia-dcgm-exporter", desired=3, current=1)
    x = only(build(daemonsets=[ds]), "daemonset-not-scheduled")
    assert "2 of 3 pods not scheduled" in x.message


def test_driver_daemonset_desired_zero_with_host_drivers_is_fine() -> None:
    node = f.node(labels={"nvidia.com/gpu.deploy.driver": "false"})
    ds = f.daemonset("nvidia-driver-daemonset", desired=0, operand_component="nvidia-driver")
    snap = build([node], without("driver"), daemonsets=[ds])
    assert "daemonset-not-scheduled" not in codes(snap)


def test_findings_sorted_most_severe_first() -> None:
    snap = build([f.node("a", allocatable=0), f.node("b", ready=False)],
                 f.healthy_pods("a") + f.healthy_pods("b"))
    ranks = [x.severity.rank for x in snap.findings]
    assert ranks == sorted(ranks, reverse=True)
    assert snap.counts.nodes_with_findings == 2


def test_mig_invalid_single_layout() -> None:
    labels = {"nvidia.com/mig.config": "custom-split",
              "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-INVALID",
              "nvidia.com/gpu.count": "0"}
    snap = build([f.node(labels=labels, gpus=0)])
    x = only(snap, "mig-config-failed")
    assert "invalid under the single strategy" in x.message


def test_info_only_findings_exit_0() -> None:
    from gputui.domain import exit_code
    dup = f.cluster_policy(metadata={"name": "cp-2", "creationTimestamp": "2026-09-01T00:00:00Z"},
                           status={"state": "ignored"})
    snap = build(policies=[f.cluster_policy(), dup])
    assert codes(snap) == {"cluster-policy-ignored"} and exit_code(snap) == 0


def test_mig_config_failed_names_unknown_config() -> None:
    node = f.node(labels={"nvidia.com/mig.config": "all-9g.99gb",
                          "nvidia.com/mig.config.state": "failed"})
    cms = [f.load("configmap-default-mig-parted-config.json")]
    x = only(build([node], configmaps=cms), "mig-config-failed")
    assert "no such config in default-mig-parted-config (it offers all-disabled" in x.message
    ok = f.node(labels={"nvidia.com/mig.config": "all-1g.10gb",
                        "nvidia.com/mig.config.state": "failed"})
    assert "no such config" not in only(build([ok], configmaps=cms), "mig-config-failed").message


def _running_again(pod: dict[str, Any], exit_code: int, started: float) -> dict[str, Any]:
    """``pod``'s crash-looping container between two back-offs: running, its last run's
    exit code kept in lastState (what kubectl shows as ``Init:0/1``, RESTARTS 14)."""
    for key in ("initContainerStatuses", "containerStatuses"):
        for status in pod["status"].get(key) or []:
            if "waiting" in status.get("state", {}) and status.get("restartCount"):
                status["state"] = {"running": {"startedAt": f.iso(started)}}
                status["lastState"] = {"terminated": {"exitCode": exit_code,
                                                      "reason": "Error" if exit_code != 255
                                                      else "Unknown"}}
    return pod


def test_a_crash_loop_running_again_stays_failing() -> None:
    """Between two CrashLoopBackOffs the container runs again: read as "starting", it got a
    fresh grace at each restart and the node went from critical to "normal until ..."
    and back with every crash (seen in the driver-crashloop scenario)."""
    crashing = f.load("pod-driver-init-crashloop.json")
    running = _running_again(f.load("pod-driver-init-crashloop.json"), 1, f.T0 - 5)
    for pod in (crashing, running):
        snap = build(pods=without("driver") + [pod, f.workload("trainer-0")])
        x = only(snap, "driver-pod-failing")
        assert x.severity is Severity.CRITICAL, pod["status"]
        stage = snap.nodes[f.NODE].pipeline.stage("driver")
        assert stage is not None and stage.status.value == "failed"
        assert not [g for g in snap.findings if g.severity is Severity.INFO
                    and "normal until" in g.message], snap.findings
    detail = build(pods=without("driver") + [running]).nodes[f.NODE].pipeline.stage("driver")
    assert detail is not None
    assert "k8s-driver-manager running again after 14 restarts (last exit 1)" in detail.detail


def test_a_container_restarted_by_a_reboot_is_starting_not_failing() -> None:
    """After a reboot the runtime reports the lost run as Unknown, exit 255: the container
    starts again within its grace, as after any reboot."""
    rebooted = _running_again(f.load("pod-driver-init-crashloop.json"), 255, f.T0 - 5)
    snap = build(pods=without("driver") + [rebooted])
    assert "driver-pod-failing" not in codes(snap)
    stage = snap.nodes[f.NODE].pipeline.stage("driver")
    assert stage is not None and stage.status.value == "progressing"
