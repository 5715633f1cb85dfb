"""MIG enabled with no instances (``all-enabled``): one warning, on the node, that says why.

Upstream is not quiet in this state, under either strategy:

* mig-parted ``pkg/mig/reconfigure/reconfigure.go`` (``Run``) applies ``all-enabled``
  (``mig-enabled: true``, no ``mig-devices``, ``pkg/mig/builder/builder.go``), sets
  ``mig.config.state=success`` and restarts the validator and the GPU clients;
* k8s-device-plugin ``internal/rm/device_map.go`` skips MIG-enabled GPUs for
  ``nvidia.com/gpu`` and finds no MIG device on them: under ``single`` an error
  (``assertAllMigDevicesAreValid``: "has no MIG devices configured", the plugin exits),
  under ``mixed`` a warning and nothing advertised; GFD labels ``<model>-MIG-INVALID``
  under single (``internal/lm/mig-strategy.go``);
* gpu-operator ``cmd/nvidia-validator/main.go``: ``plugin-validation``
  (``validateGPUResource``, ``getGPUResourceName``) has no MIG exception and fails with no
  GPU resource, so the validator DaemonSet stays unavailable and ``isDaemonSetReady``
  (``controllers/object_controls.go``) keeps the ClusterPolicy notReady.
"""

from __future__ import annotations

from typing import Any

import pytest

from gputui.domain.catalogue import CATALOGUE
from gputui.domain.checkjson import exit_code
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DomainThresholds
from tests.domain import factory as f

H100 = "NVIDIA-H100-80GB-HBM3"
NOT_READY = f.cluster_policy(status={"state": "notReady", "conditions": [
    {"type": "Ready", "status": "False", "reason": "Error", "message": ""},
    {"type": "Error", "status": "True", "reason": "OperandNotReady",
     "message": "ClusterPolicy is not ready; states not ready: [state-operator-validation]"}]})
#: the labels GFD writes for 8 MIG-enabled H100s without instances, per strategy
GFD = {"single": {"nvidia.com/gpu.product": f"{H100}-MIG-INVALID", "nvidia.com/gpu.count": "0",
                  "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.memory": "0"},
       "mixed": {"nvidia.com/gpu.product": H100, "nvidia.com/gpu.count": "8",
                 "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.memory": "81559"}}


def _node(strategy: str, config: str = "all-enabled", **labels: str) -> dict[str, Any]:
    """The node after mig-manager applied ``config``: no GPU allocatable."""
    node = f.node(labels={"nvidia.com/mig.config": config,
                          "nvidia.com/mig.config.state": "success",
                          "nvidia.com/mig.strategy": strategy, "nvidia.com/mig.capable": "true",
                          **GFD[strategy], **labels})
    node["status"]["capacity"]["nvidia.com/gpu"] = "8" if strategy == "single" else "0"
    node["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    return node


def _pods(strategy: str) -> list[dict[str, Any]]:
    """The validator crash-loops in plugin-validation; under single the plugin exits too."""
    overrides: dict[str, dict[str, Any]] = {"operator-validator": {
        "crash_in": "plugin-validation", "restarts": 4,
        "message": "GPU resources are not discovered by the node"}}
    if strategy == "single":
        overrides["device-plugin"] = {
            "crash_in": "nvidia-device-plugin", "restarts": 6,
            "message": "invalid MIG configuration: at least one device with migEnabled=true was "
                       "not configured correctly: device 0 has no MIG devices configured"}
    return f.healthy_pods(overrides=overrides)


def _build(node: dict[str, Any], pods: list[dict[str, Any]], configmap: bool = True,
           extra_yaml: str = "") -> ClusterSnapshot:
    cm = f.load("configmap-default-mig-parted-config.json")
    cm["data"]["config.yaml"] += extra_yaml
    objs = f.objects([node], pods, policies=[NOT_READY], configmaps=[cm] if configmap else [])
    return SnapshotBuilder(DomainThresholds()).build(objs, f.T0)


def _serious(snap: ClusterSnapshot) -> list[Finding]:
    return [x for x in snap.findings if x.severity.rank >= 2]


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_all_enabled_is_one_warning_on_the_node_and_the_policy_blames_it(strategy: str) -> None:
    """One warning, ``mig-no-instances``, naming the config and a layout to apply; the
    validator, the device plugin, the GPUs and the ClusterPolicy's notReady are its
    symptoms (info). Before: ``mig-config-failed`` under single, although mig-manager had
    applied the config; ``cluster-policy-not-ready`` as a second warning under mixed."""
    snap = _build(_node(strategy), _pods(strategy))
    (only,) = _serious(snap)
    assert (only.code, only.severity, only.node) == ("mig-no-instances", Severity.WARNING, f.NODE)
    assert only.message == (f"MIG enabled with no instances on {f.NODE} (nvidia.com/mig.config="
                            "all-enabled applied): no GPUs can be allocated; apply a layout "
                            "with instances, e.g. all-1g.10gb")
    assert only.pane == "mig" and CATALOGUE["mig-no-instances"].severity is Severity.WARNING
    policy = next(x for x in snap.findings if x.code == "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO
    assert f"caused by mig-no-instances on {f.NODE}" in policy.message
    symptoms = {x.code for x in snap.findings if x.node == f.NODE and x.severity is Severity.INFO}
    assert "validator-stuck" in symptoms
    assert ("operand-pod-failing" in symptoms) is (strategy == "single")
    assert "mig-config-failed" not in {x.code for x in snap.findings}
    assert exit_code(snap) == 1


def test_instances_on_other_gpus_under_mixed_are_quiet() -> None:
    """Under mixed an empty MIG GPU is only a device-plugin warning in its log; the MIG
    devices of the other GPUs are advertised and the validator passes (k8s-device-plugin
    ``internal/rm/device_map.go``, gpu-operator ``cmd/nvidia-validator/main.go``)."""
    half = ("\n  half-empty:\n    - devices: [0, 1, 2, 3]\n      mig-enabled: true\n"
            "      mig-devices: {}\n    - devices: [4, 5, 6, 7]\n      mig-enabled: true\n"
            "      mig-devices: {\"1g.10gb\": 7}\n")
    node = _node("mixed", "half-empty")
    node["status"]["capacity"]["nvidia.com/mig-1g.10gb"] = "28"
    node["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] = "28"
    snap = _build(node, f.healthy_pods(), extra_yaml=half)
    assert "mig-no-instances" not in {x.code for x in snap.findings}


def test_an_invalid_single_layout_with_instances_stays_mig_config_failed() -> None:
    """``-MIG-INVALID`` also means more than one profile under single (GFD
    ``internal/lm/mig-strategy.go``): that is not the no-instances case."""
    node = _node("single", "all-balanced")
    snap = _build(node, _pods("single"))
    assert "mig-no-instances" not in {x.code for x in snap.findings}
    assert "mig-config-failed" in {x.code for x in snap.findings}


def test_without_the_config_the_finding_is_not_guessed() -> None:
    """The ConfigMap not read: what the config does is unknown, so no mig-no-instances
    (single's ``-MIG-INVALID`` is still reported as before)."""
    snap = _build(_node("single"), _pods("single"), configmap=False)
    assert "mig-no-instances" not in {x.code for x in snap.findings}
    assert "mig-config-failed" in {x.code for x in snap.findings}
