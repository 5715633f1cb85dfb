"""Findings for the drills that behave as upstream (issue 19, items 7-9)."""

from __future__ import annotations

from typing import Any

from gputui.domain.inputs import XidEvent
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f

CM = "time-slicing-config"


def build(nodes: list[dict[str, Any]], **kw: Any) -> ClusterSnapshot:
    return SnapshotBuilder().build(f.objects(nodes, f.healthy_pods(), **kw), f.T0)


def found(snap: ClusterSnapshot, code: str) -> list[Finding]:
    return [x for x in snap.findings if x.code == code]


def _sharing(label: str, with_configmap: bool = True) -> ClusterSnapshot:
    policy = f.cluster_policy(spec={"devicePlugin": {"config": {"name": CM, "default": ""}}})
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": CM, "namespace": f.NS},
                 "data": {"tesla-t4": "version: v1\n", "l4-renamed": "version: v1\n"}}
    node = f.node(labels={"nvidia.com/device-plugin.config": label})
    return build([node], policies=[policy], configmaps=[configmap] if with_configmap else [])


def test_sharing_config_missing_names_label_configmap_and_keys() -> None:
    """k8s-device-plugin ``cmd/config-manager/main.go``: a label naming a key the ConfigMap
    lacks fails config-manager ("specified config X does not exist")."""
    (x,) = found(_sharing("tesla-t4-typo"), "sharing-config-missing")
    assert x.severity is Severity.WARNING and x.node == f.NODE
    assert "nvidia.com/device-plugin.config=tesla-t4-typo" in x.message
    assert CM in x.message and "l4-renamed, tesla-t4" in x.message
    assert "specified config tesla-t4-typo does not exist" in x.hint
    assert "config-manager-init" in x.hint


def test_sharing_config_present_or_unread_says_nothing() -> None:
    assert found(_sharing("tesla-t4"), "sharing-config-missing") == []
    # the ConfigMap not read (or absent): what it offers is unknown, so no claim
    assert found(_sharing("tesla-t4-typo", with_configmap=False), "sharing-config-missing") == []


def test_mig_failed_hint_retries_by_deleting_the_mig_manager_pod() -> None:
    """mig-parted ``cmd/nvidia-mig-manager/main.go`` applies the current label when it
    starts: deleting its pod is the retry; a detour through all-disabled re-partitions GPUs."""
    node = f.node(labels={"nvidia.com/mig.config": "all-1g.10gb",
                          "nvidia.com/mig.config.state": "failed"})
    (x,) = found(build([node]), "mig-config-failed")
    assert "all-disabled" not in x.hint and "and back" not in x.hint
    assert "delete pod nvidia-mig-manager-" in x.hint and "applies the current label" in x.hint


def test_unlisted_xid_uses_the_exporters_err_msg() -> None:
    """dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` carries ``err_msg``: an XID the table does
    not list reads by that text; a listed one keeps the table's meaning."""
    events = [XidEvent(gpu=0, xid=201, when=f.T0 - 60, message="Some new GPU event"),
              XidEvent(gpu=1, xid=48, when=f.T0 - 60, message="Double Bit ECC Error"),
              XidEvent(gpu=2, xid=202, when=f.T0 - 60, message="Unknown")]
    snap = SnapshotBuilder().build(f.objects([f.node()], f.healthy_pods(),
                                             xids={f.NODE: events}), f.T0)
    by_gpu = {x.subject: x.message for x in found(snap, "xid-error")}
    assert "XID 201 (not in gputui's XID catalogue; the exporter says: Some new GPU event)" \
        in by_gpu["gpu0"]
    assert "XID 48 (double-bit ECC error" in by_gpu["gpu1"]
    assert "XID 202 (unlisted XID" in by_gpu["gpu2"]


def _validator(restarts: int, running_for: float) -> list[dict[str, Any]]:
    return f.healthy_pods(overrides={"operator-validator": {
        "stuck_in": "cuda-validation", "restarts": restarts,
        "stuck_since": f.T0 - running_for}})


def test_cuda_validation_running_again_after_giving_up_is_stuck() -> None:
    """gpu-operator ``cmd/nvidia-validator/main.go``: cuda-validation exits only after its
    60 x 5 s budget, so a restarted one running again has already given up; between its
    back-offs it is still stuck, with no fresh grace (a reboot's restart finishes in
    seconds and is left alone)."""
    snap = SnapshotBuilder().build(f.objects([f.node()], _validator(3, 120)), f.T0)
    (x,) = found(snap, "validator-stuck")
    assert x.severity is Severity.WARNING and "gave up 3x" in x.message
    fresh = SnapshotBuilder().build(f.objects([f.node()], _validator(1, 20)), f.T0)
    assert found(fresh, "validator-stuck") == []


def test_cuda_validation_running_again_after_a_failed_exit_is_stuck_at_once() -> None:
    """When the last run's exit code says it failed, the restarted check gave up: stuck
    from its first second, not only after a minute (it flickered between the back-off's
    warning and nothing for that minute); a run the reboot ended (255) is left alone."""
    def with_last_exit(code: int) -> list[dict[str, Any]]:
        pods = _validator(2, 10)
        for pod in pods:
            for status in pod["status"].get("initContainerStatuses") or []:
                if status["name"] == "cuda-validation":
                    status["lastState"] = {"terminated": {"exitCode": code}}
        return pods

    snap = SnapshotBuilder().build(f.objects([f.node()], with_last_exit(1)), f.T0)
    (x,) = found(snap, "validator-stuck")
    assert x.severity is Severity.WARNING and "gave up 2x, running again" in x.message
    rebooted = SnapshotBuilder().build(f.objects([f.node()], with_last_exit(255)), f.T0)
    assert found(rebooted, "validator-stuck") == []
