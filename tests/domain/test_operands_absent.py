"""A GPU node that gets no operand pod at all is reported with its likely cause.

The DaemonSet controller leaves out a node whose NoSchedule/NoExecute taint the pod does not
tolerate, or whose labels miss the DaemonSet's nodeSelector (kubernetes
``pkg/controller/daemon/daemon_controller.go``, ``NodeShouldRunDaemonPod``); such a node is
in no ``desiredNumberScheduled``, so nothing else shows it. The operand DaemonSets select
``nvidia.com/gpu.deploy.<operand>=true`` (gpu-operator ``assets/state-*/0500_daemonset.yaml``)
and tolerate what ClusterPolicy ``daemonsets.tolerations`` lists. Was: no finding, exit 0.
"""

from __future__ import annotations

from typing import Any

from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _ds() -> dict[str, Any]:
    ds = f.daemonset("nvidia-driver-daemonset", desired=1, current=1,
                     operand_component="nvidia-driver")
    ds["spec"]["template"]["spec"]["tolerations"] = [GPU_TOLERATION]
    return ds


def _bare(age: float = 7200, **labels: str) -> dict[str, Any]:
    node = f.node("bare", labels=labels)
    node["metadata"]["creationTimestamp"] = f.iso(f.T0 - age)
    return node


def _build(bare: dict[str, Any]) -> ClusterSnapshot:
    objects = f.objects([f.node("a"), bare], f.healthy_pods("a"), daemonsets=[_ds()])
    return SnapshotBuilder().build(objects, f.T0)


def _found(snap: ClusterSnapshot) -> list[Finding]:
    return [x for x in snap.findings if x.node == "bare" and x.code == "gpu-node-unmanaged"]


def test_an_untolerated_taint_is_named() -> None:
    node = _bare()
    node["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                              {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
                              {"key": "soft", "effect": "PreferNoSchedule"}]
    (x,) = _found(_build(node))
    assert x.severity is Severity.WARNING and "runs no GPU Operator pod" in x.message
    assert "untolerated taint dedicated=ml:NoSchedule" in x.message
    assert "nvidia.com/gpu:" not in x.message and "soft" not in x.message
    assert "daemonsets.tolerations" in x.hint


def test_deploy_labels_set_false_are_named() -> None:
    off = {f"nvidia.com/gpu.deploy.{o}": "false" for o in (
        "driver", "container-toolkit", "operator-validator", "device-plugin",
        "gpu-feature-discovery", "dcgm-exporter", "mig-manager")}
    (x,) = _found(_build(_bare(**off)))
    assert "nvidia.com/gpu.deploy.driver" in x.message and "=false" in x.message


def test_deploy_labels_missing_mean_the_node_selector_does_not_match() -> None:
    node = _bare()
    for key in [k for k in node["metadata"]["labels"] if k.startswith("nvidia.com/gpu.deploy.")]:
        del node["metadata"]["labels"][key]
    (x,) = _found(_build(node))
    assert "nodeSelector" in x.message


def test_a_new_node_gets_its_grace_and_a_node_with_pods_says_nothing() -> None:
    assert not _found(_build(_bare(age=60)))
    objects = f.objects([f.node("a"), _bare()], f.healthy_pods("a") + f.healthy_pods("bare"),
                        daemonsets=[_ds()])
    assert not _found(SnapshotBuilder().build(objects, f.T0))
