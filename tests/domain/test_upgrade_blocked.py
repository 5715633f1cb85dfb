"""``upgrade-blocked`` is critical only with evidence that the block outlasts a cycle.

k8s-operator-libs ``pkg/upgrade/upgrade_state.go`` (``BuildState``) returns "driver DaemonSet
should not have Unscheduled pods" when ``desiredNumberScheduled`` differs from the pods the
DaemonSet owns, and the controller simply tries again at its next cycle: the counts differ
for a moment at every driver-pod replacement and scale-down. Was: critical at once, so
``check`` could exit 2 at random during a rolling upgrade.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.upgrade_blocked import BLOCKED_GRACE_SECONDS
from tests.domain import factory as f

DS = f.daemonset("nvidia-driver-daemonset", desired=2, current=2,
                 operand_component="nvidia-driver")
DS["spec"]["template"]["spec"]["tolerations"] = [  # as the GPU Operator's default
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def _replacing() -> Any:
    """Node a runs its driver; node b's driver pod was just deleted by the upgrade
    (pod-restart-required) and the DaemonSet controller has not made the new one yet."""
    a = f.node("a", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-done"})
    b = f.node("b", labels={"nvidia.com/gpu-driver-upgrade-state": "pod-restart-required"})
    pods = f.healthy_pods("a") + [p for p in f.healthy_pods("b")
                                  if "driver" not in p["metadata"]["name"]]
    return f.objects([a, b], pods, daemonsets=[DS])


def _blocked(snap: ClusterSnapshot) -> Finding:
    (found,) = [x for x in snap.findings if x.code == "upgrade-blocked"]
    return found


def test_a_mismatch_seen_once_during_a_replacement_is_info() -> None:
    snap = SnapshotBuilder().build(_replacing(), f.T0)
    x = _blocked(snap)
    assert x.severity is Severity.INFO and "owns 1 pods for 2 desired" in x.message
    assert "critical if it lasts past" in x.message
    assert snap.upgrade.blocked is not None  # the upgrade view still says why nothing moves


def test_a_mismatch_gputui_has_seen_past_a_cycle_is_critical() -> None:
    builder = SnapshotBuilder()
    builder.build(_replacing(), f.T0)
    assert _blocked(builder.build(_replacing(), f.T0 + 60)).severity is Severity.INFO
    x = _blocked(builder.build(_replacing(), f.T0 + BLOCKED_GRACE_SECONDS + 1))
    assert x.severity is Severity.CRITICAL and "seen for 3 min" in x.message


def test_counts_that_match_again_restart_the_clock() -> None:
    builder = SnapshotBuilder()
    builder.build(_replacing(), f.T0)
    healed = f.objects([f.node("a"), f.node("b")], f.healthy_pods("a") + f.healthy_pods("b"),
                       daemonsets=[DS])
    assert not [x for x in builder.build(healed, f.T0 + 100).findings
                if x.code == "upgrade-blocked"]
    later = _blocked(builder.build(_replacing(), f.T0 + BLOCKED_GRACE_SECONDS + 100))
    assert later.severity is Severity.INFO


def _unmanaged(age: float) -> Any:
    """Node a runs its driver; node c is selected by the driver DaemonSet (deploy.driver=
    true) but never got a driver pod, so the controller never labelled it."""
    c = f.node("c")
    del c["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"]
    c["metadata"]["creationTimestamp"] = f.iso(f.T0 - age)
    return f.objects([f.node("a"), c], f.healthy_pods("a"), daemonsets=[DS])


def test_a_node_older_than_the_grace_without_any_driver_pod_is_critical_at_once() -> None:
    x = _blocked(SnapshotBuilder().build(_unmanaged(3600), f.T0))
    assert x.severity is Severity.CRITICAL and x.node is None
    assert "never got a driver pod" in x.message and ": c" in x.message


def test_a_node_that_just_joined_without_its_driver_pod_is_info() -> None:
    assert _blocked(SnapshotBuilder().build(_unmanaged(30), f.T0)).severity is Severity.INFO


def test_a_node_the_daemonset_cannot_schedule_for_a_taint_is_no_evidence() -> None:
    """A node whose taint the driver pods do not tolerate is in no desiredNumberScheduled
    (kubernetes ``pkg/controller/daemon/daemon_controller.go`` ``NodeShouldRunDaemonPod``):
    it does not make a moment's mismatch critical."""
    objects = _unmanaged(3600)
    objects.nodes["c"]["spec"]["taints"] = [{"key": "dedicated", "effect": "NoSchedule"}]
    assert _blocked(SnapshotBuilder().build(objects, f.T0)).severity is Severity.INFO


def _failed_create(ago: float, name: str = "nvidia-driver-daemonset") -> dict[str, Any]:
    return {"kind": "Event", "metadata": {"name": "f1", "namespace": f.NS},
            "involvedObject": {"kind": "DaemonSet", "name": name}, "reason": "FailedCreate",
            "type": "Warning", "lastTimestamp": f.iso(f.T0 - ago),
            "message": "Error creating: pods \"nvidia-driver-daemonset-x\" is forbidden: "
                       "exceeded quota: gpu-operator"}


def test_a_recent_failed_create_on_the_driver_daemonset_is_critical_at_once() -> None:
    """The DaemonSet controller could not create the pod (kubernetes
    ``pkg/controller/daemon/daemon_controller.go`` records FailedCreate "Error creating: %v"):
    the gap is no replacement's moment."""
    objects = _replacing()
    objects = replace(objects, events=[_failed_create(60)])
    x = _blocked(SnapshotBuilder().build(objects, f.T0))
    assert x.severity is Severity.CRITICAL and "exceeded quota" in x.message


def test_an_old_or_foreign_failed_create_is_no_evidence() -> None:
    for event in (_failed_create(3600), _failed_create(60, "nvidia-dcgm-exporter")):
        objects = replace(_replacing(), events=[event])
        assert _blocked(SnapshotBuilder().build(objects, f.T0)).severity is Severity.INFO
