"""A healthy cluster's normal life raises no warning; past upstream's own limits it does.

Each case is written from the upstream fact named in its docstring (repository and file),
not from the emulator.
"""

from __future__ import annotations

from typing import Any

from gputui.domain.checkjson import exit_code
from gputui.domain.model import ClusterSnapshot, Severity
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, DRIVER_STARTUP_PROBE_SECONDS
from tests.domain import factory as f
from tests.domain.factory import NOT_READY, build, joining_pods, of


def worst(snap: ClusterSnapshot) -> Severity | None:
    return max((x.severity for x in snap.findings), default=None, key=lambda s: s.rank)


def test_threshold_defaults_come_from_upstream_probes() -> None:
    """gpu-operator ``assets/state-driver/0500_daemonset.yaml``: the driver's startupProbe
    (initialDelaySeconds 60, periodSeconds 10, failureThreshold 120) = 21 min."""
    assert DRIVER_STARTUP_PROBE_SECONDS == 1260
    assert DEFAULT_THRESHOLDS.driver_startup_minutes == 21.0
    assert DEFAULT_THRESHOLDS.validator_stuck_minutes == 5.0  # cuda-validation 60 x 5 s


def test_settings_take_thresholds_from_the_domain() -> None:
    """One place for the numbers: settings' Thresholds is the domain's."""
    from gputui.settings import Settings, Thresholds
    assert Thresholds is type(DEFAULT_THRESHOLDS)
    assert Settings().thresholds == DEFAULT_THRESHOLDS


def test_node_joining_with_the_driver_compiling_is_info() -> None:
    """A driver container may take the whole startup probe budget (21 min) before the
    kubelet restarts it; toolkit, validator and plugin wait behind it (gpu-operator
    ``assets/state-driver/0500_daemonset.yaml``, ``cmd/nvidia-validator/main.go``)."""
    node = f.node(gpus=0)
    node["metadata"]["labels"]["nvidia.com/gpu.count"] = "8"
    snap = build([node], joining_pods(f.T0 - 18 * 60), policies=[NOT_READY])
    assert worst(snap) is Severity.INFO and exit_code(snap) == 0
    (gpus,) = of(snap, "gpus-unavailable")
    assert "driver stage comes up" in gpus.message and "startup probe" in gpus.message
    assert "normal until 10:03 UTC" in gpus.message  # 17:30 ago + 21 min
    assert not of(snap, "validator-stuck") and not of(snap, "driver-pod-failing")
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO and "grace" in policy.message


def test_driver_past_its_startup_budget_is_a_warning() -> None:
    """Past 21 min the kubelet itself gives up on the driver (startupProbe)."""
    node = f.node(gpus=0)
    snap = build([node], joining_pods(f.T0 - 30 * 60), policies=[NOT_READY])
    (driver,) = of(snap, "driver-pod-failing")
    assert driver.severity is Severity.WARNING and "21 min" in driver.message
    assert of(snap, "cluster-policy-not-ready")[0].severity is Severity.WARNING
    assert exit_code(snap) == 1


def test_crash_looping_driver_leads_the_node_row() -> None:
    """A kernel update without headers: the driver pod crash-loops (gpu-operator #85/#180),
    every GPU goes away. The node's first finding is the cause, not the symptom."""
    pods = [p for p in f.healthy_pods() if p["metadata"]["labels"]["app"]
            != "nvidia-driver-daemonset"]
    pods.append(f.operand_pod("driver", crash_in="nvidia-driver-ctr", restarts=12,
                              message="Could not install Linux kernel headers", suffix="k"))
    snap = build([f.node(allocatable=0)], pods)
    row = snap.nodes[f.NODE].findings
    assert row[0].code == "driver-pod-failing" and row[0].severity is Severity.CRITICAL
    assert any(x.code == "gpus-unavailable" and x.severity is Severity.WARNING for x in row)


def test_reboot_is_info_until_the_not_ready_toleration() -> None:
    """Kubernetes tolerates a NotReady node for 300 s (DefaultNotReadyTolerationSeconds)."""
    node = f.node(ready=False)
    for cond in node["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["lastTransitionTime"] = f.iso(f.T0 - 120)
    snap = build([node], f.healthy_pods())
    assert {x.severity for x in snap.findings} == {Severity.INFO}
    assert "normal for a reboot until 10:03 UTC" in of(snap, "node-not-ready")[0].message
    later = build([node], f.healthy_pods(), now=f.T0 + 10 * 60)
    assert of(later, "node-not-ready")[0].severity is Severity.WARNING


def test_a_reboot_seen_as_ready_unknown_is_info_within_the_toleration() -> None:
    """A rebooting node's kubelet goes silent: the node lifecycle controller sets Ready
    ``Unknown`` (kube-controller-manager ``node_lifecycle_controller.go``), not False."""
    node = f.node(ready=False)
    for cond in node["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond.update(status="Unknown", reason="NodeStatusUnknown",
                        message="Kubelet stopped posting node status.",
                        lastTransitionTime=f.iso(f.T0 - 60))
    snap = build([node], f.healthy_pods())
    assert {x.severity for x in snap.findings} == {Severity.INFO}
    assert "Kubelet stopped posting node status" in of(snap, "node-not-ready")[0].message
    later = build([node], f.healthy_pods(), now=f.T0 + 10 * 60)
    assert of(later, "node-not-ready")[0].severity is Severity.WARNING


def test_crash_looping_device_plugin_is_not_blamed_on_the_validator() -> None:
    """The validator's plugin-validation waits for node capacity, which only the device
    plugin publishes (gpu-operator ``cmd/nvidia-validator/main.go``): blame the plugin."""
    pods = [p for p in f.healthy_pods() if p["metadata"]["labels"]["app"] not in (
        "nvidia-device-plugin-daemonset", "nvidia-operator-validator")]
    pods.append(f.operand_pod("device-plugin", crash_in="nvidia-device-plugin", restarts=7,
                              suffix="dp"))
    pods.append(f.operand_pod("operator-validator", crash_in="plugin-validation", restarts=4,
                              suffix="va"))
    snap = build([f.node(allocatable=0)], pods)
    assert snap.nodes[f.NODE].pipeline.first_broken().operand == "device-plugin"
    (stuck,) = of(snap, "validator-stuck")
    assert stuck.severity is Severity.INFO and "failed device-plugin stage" in stuck.message
    (plugin,) = of(snap, "operand-pod-failing")
    assert plugin.subject == "device-plugin" and plugin.severity is Severity.WARNING


def test_mig_retry_hint_says_the_same_value_does_nothing() -> None:
    """mig-manager acts on changes of nvidia.com/mig.config and when it starts (mig-parted
    ``cmd/nvidia-mig-manager/main.go``): setting the same value again is a no-op, deleting
    its pod is the retry (a detour through all-disabled would re-partition the GPUs)."""
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "failed"}
    snap = build([f.node(labels=labels)], f.healthy_pods())
    (failed,) = of(snap, "mig-config-failed")
    assert "setting the same value again does nothing" in failed.hint
    assert "all-disabled" not in failed.hint and "delete pod nvidia-mig-manager" in failed.hint


def test_mig_paused_labels_within_the_mig_grace_are_info() -> None:
    """mig-parted ``pkg/mig/reconfigure``: labels paused-for-mig-change while it applies."""
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "pending",
              "nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change"}
    times = {f.NODE: {"nvidia.com/mig.config.state": f.T0 - 3 * 60}}
    pods = [p for p in f.healthy_pods() if p["metadata"]["labels"]["app"]
            != "nvidia-device-plugin-daemonset"]
    snap = build([f.node(labels=labels, allocatable=0)], pods, label_times=times)
    (paused,) = of(snap, "operand-paused")
    assert paused.severity is Severity.INFO and "by the MIG change to all-1g.10gb" in paused.message
    assert exit_code(snap) == 0


def test_mig_paused_labels_without_a_change_are_a_warning() -> None:
    labels = {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": "success",
              "nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change"}
    snap = build([f.node(labels=labels)], f.healthy_pods())
    (paused,) = of(snap, "operand-paused")
    assert paused.severity is Severity.WARNING and "no MIG change is running" in paused.message


def _nfd_node(name: str, labels: dict[str, str], age: float) -> dict[str, Any]:
    node = f.node(name, labels=labels)
    for key in [k for k in node["metadata"]["labels"]
                if k.startswith(("nvidia.com/", "feature.node.kubernetes.io/pci-"))]:
        node["metadata"]["labels"].pop(key)
    node["metadata"]["labels"].update(labels)
    node["metadata"]["creationTimestamp"] = f.iso(f.T0 - age)
    return node


def test_gpu_node_not_managed_by_the_operator_is_reported() -> None:
    """The operator sets nvidia.com/gpu.present from NFD's PCI labels (gpu-operator
    ``controllers/state_manager.go``, ``gpuNodeLabels``): a GPU node without it for long
    gets nothing from the operator."""
    old = _nfd_node("nfd-old", {"feature.node.kubernetes.io/pci-0302_10de.present": "true",
                                "nvidia.com/gpu.present": "false"}, age=3600)
    new = _nfd_node("nfd-new", {"feature.node.kubernetes.io/pci-10de.present": "true"},
                    age=30)
    snap = build([old, new], [])
    found = {x.node: x for x in of(snap, "gpu-node-unmanaged")}
    assert found["nfd-old"].severity is Severity.WARNING
    assert "pci-0302_10de.present=true" in found["nfd-old"].message
    assert found["nfd-new"].severity is Severity.INFO


def test_gpu_node_opted_out_is_info() -> None:
    """``nvidia.com/gpu.deploy.operands=false`` removes every operand by choice
    (gpu-operator ``controllers/state_manager.go``, ``hasOperandsDisabled``)."""
    node = f.node(labels={"nvidia.com/gpu.deploy.operands": "false"})
    snap = build([node], [])
    (x,) = of(snap, "gpu-node-unmanaged")
    assert x.severity is Severity.INFO and "opted out" in x.message


def test_cluster_policy_seeing_no_gpu_node_while_nfd_does_is_reported() -> None:
    """ClusterPolicy Ready reason NoGPUNodes (gpu-operator ``internal/conditions``)."""
    cp = f.cluster_policy(status={"state": "ready", "conditions": [
        {"type": "Ready", "status": "True", "reason": "NoGPUNodes", "message": ""}]})
    node = _nfd_node("nfd-0", {"feature.node.kubernetes.io/pci-10de.present": "true"}, 30)
    snap = build([node], [], policies=[cp])
    assert any(x.node is None and x.severity is Severity.WARNING
               for x in of(snap, "gpu-node-unmanaged"))


def test_a_slow_join_inside_the_driver_startup_probe_is_one_warning() -> None:
    """A node past its pool's usual time to GPU while its driver container is still inside
    its startup probe (60 s + 120 x 10 s, gpu-operator ``assets/state-driver/
    0500_daemonset.yaml``) keeps ``state-driver`` notReady (``controllers/object_controls.go``,
    ``isDaemonSetReady``): that notReady is the slow join's symptom, said once as
    ``slow-gpu-join``, not a second warning. (Was: slow-gpu-join plus a warning
    cluster-policy-not-ready.)"""
    joined = f.T0 - 16 * 60  # past the 15 min a pool without history allows
    node = f.node(labels={"cloud.google.com/gke-nodepool": "h100-pool"}, allocatable=0)
    node["metadata"]["creationTimestamp"] = f.iso(joined)
    del node["metadata"]["labels"]["nvidia.com/gpu.count"]
    snap = build([node], joining_pods(joined + 30), policies=[NOT_READY])
    warnings = [x for x in snap.findings if x.severity.rank >= Severity.WARNING.rank]
    assert [x.code for x in warnings] == ["slow-gpu-join"], snap.findings
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO and "slow-gpu-join" in policy.message
