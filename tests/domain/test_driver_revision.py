"""A driver pod is out of date when its ``controller-revision-hash`` is not its DaemonSet's
current revision, as the upgrade controller decides (k8s-operator-libs
``pkg/upgrade/common_manager.go`` ``podInSyncWithDS``; ``pod_manager.go``
``GetDaemonsetControllerRevisionHash``), not when its ``pod-template-generation`` is below the
DaemonSet's ``metadata.generation``: that generation also moves for changes outside the
template (an update strategy, a label on the spec), which replace no pod. The current hash
is read from a pod made from the current template generation (annotation
``deprecated.daemonset.template.generation``), else from the status' updated count
(kubernetes ``pkg/controller/daemon/util/daemonset_util.go`` ``IsPodUpdated``).
"""

from __future__ import annotations

from typing import Any

from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f

DRIVER = "nvidia-driver-daemonset"


def _ds(generation: int, template: int, updated: int) -> dict[str, Any]:
    ds = f.daemonset(DRIVER, desired=2, operand_component="nvidia-driver")
    ds["metadata"]["generation"] = generation
    ds["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": str(template)}
    ds["status"].update(observedGeneration=generation, updatedNumberScheduled=updated)
    return ds


def _outdated(ds: dict[str, Any], made: dict[str, tuple[str, str]]) -> dict[str, bool | None]:
    """``made``: node -> (hash, template generation) of its driver pod."""
    pods = f.healthy_pods("a") + f.healthy_pods("b")
    for pod in pods:
        if pod["metadata"]["labels"]["app"] == DRIVER:
            rev, gen = made[pod["spec"]["nodeName"]]
            pod["metadata"]["labels"].update({"controller-revision-hash": rev,
                                              "pod-template-generation": gen})
    snap = SnapshotBuilder().build(
        f.objects([f.node("a"), f.node("b")], pods, daemonsets=[ds]), f.T0)
    return {name: snap.nodes[name].driver_outdated for name in ("a", "b")}


def test_a_change_outside_the_template_outdates_no_pod() -> None:
    """generation 5, template generation 2, every pod from template 2: in sync. (Was:
    every pod out of date, generation 2 < 5.)"""
    made = {"a": ("5d7f", "2"), "b": ("5d7f", "2")}
    assert _outdated(_ds(5, 2, updated=2), made) == {"a": False, "b": False}


def test_the_pod_from_the_current_template_tells_the_current_hash() -> None:
    made = {"a": ("5d7f", "2"), "b": ("6c9b", "3")}
    assert _outdated(_ds(3, 3, updated=1), made) == {"a": True, "b": False}


def test_a_new_template_no_pod_carries_yet_outdates_every_pod() -> None:
    made = {"a": ("5d7f", "2"), "b": ("5d7f", "2")}
    assert _outdated(_ds(3, 3, updated=0), made) == {"a": True, "b": True}


def test_a_rollback_to_the_pods_template_outdates_none() -> None:
    """Template generation 4 went back to the template of generation 2: same hash, so the
    DaemonSet counts both pods updated and the upgrade controller leaves them alone."""
    made = {"a": ("5d7f", "2"), "b": ("5d7f", "2")}
    assert _outdated(_ds(4, 4, updated=2), made) == {"a": False, "b": False}


def test_a_stale_status_without_a_current_pod_is_unknown() -> None:
    ds = _ds(4, 4, updated=2)
    ds["status"]["observedGeneration"] = 3
    made = {"a": ("5d7f", "2"), "b": ("5d7f", "2")}
    assert _outdated(ds, made) == {"a": None, "b": None}
