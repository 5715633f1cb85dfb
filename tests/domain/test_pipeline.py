"""The per-node operand pipeline: order, statuses and details (§1.2, §1.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gputui.domain.model import NodePipeline, StageStatus
from gputui.domain.pipeline import build_pipeline
from gputui.domain.pods import read_pod
from tests.domain import factory as f

ORDER = ["driver", "container-toolkit", "operator-validator", "device-plugin", "dcgm-exporter",
         "gpu-feature-discovery", "mig-manager"]


def pipeline(labels: Mapping[str, str | None] | None = None, pods: list[dict[str, Any]] | None = None,
             **kwargs: Any) -> NodePipeline:
    node_labels = f.node(labels=dict(labels or {}))["metadata"]["labels"]
    kwargs.setdefault("policy_present", True)
    kwargs.setdefault("with_daemonset", set(ORDER))
    kwargs.setdefault("mig_capable", True)
    return build_pipeline(node_labels, [read_pod(p) for p in (f.healthy_pods() if pods is None
                                                              else pods)], **kwargs)


def test_healthy_node_all_ready_in_chain_order() -> None:
    result = pipeline()
    assert [s.operand for s in result.stages] == ORDER
    assert all(s.status is StageStatus.READY for s in result.stages)
    assert result.first_broken() is None
    assert all(s.detail == "" for s in result.stages)


def test_driver_crashloop_breaks_the_chain_and_others_wait() -> None:
    pods = [f.load("pod-driver-init-crashloop.json")] + f.healthy_pods(
        operands=ORDER[1:], overrides={
            "container-toolkit": {"stuck_in": "driver-validation"},
            "operator-validator": {"stuck_in": "driver-validation"},
            "device-plugin": {"stuck_in": "toolkit-validation"}})
    result = pipeline(pods=pods)
    driver = result.stage("driver")
    assert driver is not None and driver.status is StageStatus.FAILED
    assert driver.detail == "Init:CrashLoopBackOff in k8s-driver-manager, 14 restarts"
    assert driver.container == "k8s-driver-manager" and driver.restarts == 14
    assert driver.substages[0].status is StageStatus.FAILED
    assert result.first_broken() is driver
    toolkit = result.stage("container-toolkit")
    assert toolkit is not None and toolkit.status is StageStatus.PROGRESSING
    assert toolkit.detail == "waiting in init container driver-validation"
    plugin = result.stage("device-plugin")
    assert plugin is not None and plugin.detail == "waiting in init container toolkit-validation"


def test_validator_substages_follow_the_init_chain() -> None:
    pods = f.healthy_pods(operands=ORDER[:2]) + [f.load("pod-validator-cuda-validation.json")]
    stage = pipeline(pods=pods).stage("operator-validator")
    assert stage is not None and stage.status is StageStatus.PROGRESSING
    assert [s.name for s in stage.substages] == ["driver-validation", "toolkit-validation",
                                                 "cuda-validation", "plugin-validation"]
    assert [s.status for s in stage.substages] == [
        StageStatus.READY, StageStatus.READY, StageStatus.PROGRESSING, StageStatus.ABSENT]
    assert stage.detail == "waiting in init container cuda-validation"


def test_host_driver_is_disabled_not_absent() -> None:
    pods = f.healthy_pods(operands=ORDER[1:])
    driver = pipeline({"nvidia.com/gpu.deploy.driver": "false"}, pods).stage("driver")
    assert driver is not None and driver.status is StageStatus.DISABLED
    assert "host driver" in driver.detail


def test_driver_disabled_in_cluster_policy() -> None:
    pods = f.healthy_pods(operands=ORDER[1:])
    driver = pipeline(pods=pods, disabled={"driver"}).stage("driver")
    assert driver is not None and driver.status is StageStatus.DISABLED
    assert driver.detail == "disabled in ClusterPolicy"


def test_paused_labels_make_paused_stages() -> None:
    labels = {"nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change",
              "nvidia.com/gpu.deploy.gpu-feature-discovery": "paused-for-mig-change",
              "nvidia.com/gpu.deploy.dcgm-exporter": "custom_paused-for-driver-upgrade"}
    pods = f.healthy_pods(operands=["driver", "container-toolkit", "operator-validator",
                                    "mig-manager"])
    result = pipeline(labels, pods)
    for operand in ("device-plugin", "gpu-feature-discovery", "dcgm-exporter"):
        stage = result.stage(operand)
        assert stage is not None and stage.status is StageStatus.PAUSED, operand
    stage = result.stage("device-plugin")
    assert stage is not None
    assert stage.detail == "nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change"
    assert result.first_broken() is stage


def test_expected_operand_without_pod_is_absent() -> None:
    pods = [p for p in f.healthy_pods() if "device-plugin" not in p["metadata"]["name"]]
    stage = pipeline(pods=pods).stage("device-plugin")
    assert stage is not None and stage.status is StageStatus.ABSENT


def test_mig_manager_only_on_mig_capable_nodes() -> None:
    labels = {"nvidia.com/mig.capable": "false", "nvidia.com/gpu.deploy.mig-manager": None}
    pods = f.healthy_pods(operands=ORDER[:-1])
    result = pipeline(labels, pods, mig_capable=False)
    assert result.stage("mig-manager") is None


def test_optional_operands_appear_only_when_deployed() -> None:
    # dcgm and node-status-exporter labels are true on every node but their DaemonSets
    # exist only when enabled in the ClusterPolicy.
    assert pipeline().stage("dcgm") is None
    pods = f.healthy_pods(operands=ORDER + ["dcgm"])
    stage = pipeline(pods=pods, with_daemonset=set(ORDER) | {"dcgm"}).stage("dcgm")
    assert stage is not None and stage.status is StageStatus.READY


def test_main_container_not_ready_is_progressing_with_container_named() -> None:
    pods = f.healthy_pods(overrides={"driver": {"not_ready": True}})
    driver = pipeline(pods=pods).stage("driver")
    assert driver is not None and driver.status is StageStatus.PROGRESSING
    assert driver.detail.startswith("nvidia-driver-ctr not ready")


def test_operands_off_disables_everything() -> None:
    result = pipeline({"nvidia.com/gpu.deploy.operands": "false"}, pods=[])
    assert result.stages and all(s.status is StageStatus.DISABLED for s in result.stages)


def test_precompiled_and_nvidiadriver_driver_pods_match_the_driver_stage() -> None:
    for app in ("nvidia-driver-daemonset-6.1.112-ubuntu22.04",
                "nvidia-gpu-driver-ubuntu22.04-7c9f"):
        pod = f.operand_pod("driver")
        pod["metadata"]["labels"] = {"app": app}
        pods = [pod] + f.healthy_pods(operands=ORDER[1:])
        driver = pipeline(pods=pods).stage("driver")
        assert driver is not None and driver.status is StageStatus.READY, app
