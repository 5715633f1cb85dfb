"""One-shot reads through real HTTP against the emulated API server."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.decode import NODES, FeedDecoder, Page
from gputui.sources.errors import UnreachableError
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from tests.sources.helpers import cluster_policy, node, pod, upgrade_event

NS = "nvidia-gpu-operator"


def seed_cluster(cluster: EmulatedCluster, nodes: int = 3) -> None:
    store = cluster.store
    for i in range(nodes):
        store.create("nodes", node(f"gpu-{i:04d}"))
    store.create("nodes", node("cpu-0", labels={"kubernetes.io/os": "linux"}))
    store.create("nodes", node("nfd-0", labels={
        "feature.node.kubernetes.io/pci-10de.present": "true"}))
    # NFD's class-specific label alone (3D controller), and a VGA one, with gpu.present false
    store.create("nodes", node("nfd-1", labels={
        "feature.node.kubernetes.io/pci-0302_10de.present": "true",
        "nvidia.com/gpu.present": "false"}))
    store.create("nodes", node("nfd-2", labels={
        "feature.node.kubernetes.io/pci-0300_10de.present": "true"}))
    store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    store.create("pods", pod(NS, "nvidia-driver-daemonset-a", "gpu-0000",
                             labels={"app": "nvidia-driver-daemonset"}))
    store.create("pods", pod("ml", "train", "gpu-0001", gpus=4))
    store.create("pods", pod("ml", "web", "gpu-0001"))
    store.create("pods", pod("ml", "done", "gpu-0001", gpus=1, phase="Succeeded"))
    store.create("pods", pod("ml", "elsewhere", "cpu-0", gpus=1))
    store.create("daemonsets.apps", {"metadata": {"name": "nvidia-driver-daemonset",
                                                  "namespace": NS}, "spec": {}})
    store.create("configmaps", {"metadata": {"name": "default-mig-parted-config",
                                             "namespace": NS}, "data": {"config.yaml": "v1"}})
    store.create("configmaps", {"metadata": {"name": "other", "namespace": "ml"}})
    store.create("events", upgrade_event("gpu-0000", "e1", "moved to upgrade-required"))
    store.create("events", {"metadata": {"name": "e2", "namespace": "default"},
                            "involvedObject": {"kind": "Node", "name": "gpu-0000"},
                            "reason": "NodeReady"})


def test_reads_what_gputui_needs(cluster: EmulatedCluster, kubeconfig: Path) -> None:
    seed_cluster(cluster)
    objects = read_objects(load_target(str(kubeconfig)))
    assert objects.operator_namespace == NS
    assert objects.context == "gputui-demo" and objects.server == cluster.url
    # the CPU node is never read; every NFD NVIDIA label the operator reads (§1.4) is
    assert sorted(objects.nodes) == ["gpu-0000", "gpu-0001", "gpu-0002", "nfd-0", "nfd-1",
                                     "nfd-2"]
    assert sorted(objects.pods) == [("ml", "train"), (NS, "nvidia-driver-daemonset-a")]
    assert list(objects.daemonsets) == ["nvidia-driver-daemonset"]
    assert list(objects.configmaps) == [(NS, "default-mig-parted-config")]
    assert [e["message"] for e in objects.events] == ["moved to upgrade-required"]
    assert [p["metadata"]["name"] for p in objects.cluster_policies] == ["cluster-policy"]
    assert objects.nvidia_drivers == () and objects.forbidden == frozenset()


def test_pages_are_read_and_reduced(cluster: EmulatedCluster, kubeconfig: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """1,203 nodes arrive in three pages of at most 500, without managedFields or images,
    with label-change times taken from managedFields."""
    seed_cluster(cluster, nodes=1203)
    cluster.clock.advance(600)
    cluster.store.mutate("nodes", "gpu-0007", None, lambda n: n["metadata"]["labels"].update(
        {"nvidia.com/mig.config.state": "pending"}), manager="nvidia-mig-manager")
    pages: list[int] = []
    original = FeedDecoder.page

    def counting_page(self: FeedDecoder[Any], data: bytes) -> Page:
        page = original(self, data)
        if self is NODES:
            pages.append(len(page.items))
        return page

    monkeypatch.setattr(FeedDecoder, "page", counting_page)
    objects = read_objects(load_target(str(kubeconfig)))
    # GPU nodes in three pages (feeds are listed concurrently), then the NFD-only feeds
    assert sorted(size for size in pages if size > 1) == [203, 500, 500]
    assert len(objects.nodes) == 1206
    reduced = objects.nodes["gpu-0007"]
    assert "managedFields" not in reduced["metadata"] and "images" not in reduced["status"]
    times = objects.label_times["gpu-0007"]
    assert times["nvidia.com/mig.config.state"] - times["nvidia.com/gpu.present"] >= 599


def test_namespace_from_operator_pod_or_override(cluster: EmulatedCluster,
                                                 kubeconfig: Path) -> None:
    cluster.store.create("nodes", node("gpu-0"))
    cluster.store.create("pods", pod("gpu-op", "gpu-operator-abc", None,
                                     labels={"app": "gpu-operator"}))
    target = load_target(str(kubeconfig))
    assert read_objects(target).operator_namespace == "gpu-op"
    assert read_objects(target, namespace="elsewhere").operator_namespace == "elsewhere"


def test_no_operator_at_all(cluster: EmulatedCluster, kubeconfig: Path) -> None:
    cluster.store.create("nodes", node("gpu-0"))
    objects = read_objects(load_target(str(kubeconfig)))
    assert objects.operator_namespace is None and list(objects.nodes) == ["gpu-0"]


def test_forbidden_resource_is_named_and_rest_works(
        cluster: EmulatedCluster, kubeconfig: Path, forbidden_paths: set[str]) -> None:
    seed_cluster(cluster)
    forbidden_paths.add("/api/v1/events")
    forbidden_paths.add("/daemonsets")
    objects = read_objects(load_target(str(kubeconfig)))
    assert objects.forbidden == frozenset({"events", "daemonsets"})
    assert objects.events == () and len(objects.nodes) == 6 and objects.pods


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = EmulatedCluster(run_controllers=False, port=port)
    path = dead.write_kubeconfig(tmp_path / "kc")
    with pytest.raises(UnreachableError) as caught:
        read_objects(load_target(str(path)))
    assert str(caught.value) == (f"cannot reach the API server at http://127.0.0.1:{port}: "
                                 "connection refused")


def test_pods_waitforcompletion_selects_are_kept_gpu_or_not(cluster: EmulatedCluster,
                                                             kubeconfig: Path) -> None:
    """The upgrade controller waits for every pod its waitForCompletion selector matches,
    GPU or not (k8s-operator-libs ``pkg/upgrade/upgrade_state.go``): those are read too."""
    store = cluster.store
    store.create("nodes", node("gpu-0"))
    policy = cluster_policy(NS)
    policy["spec"]["driver"]["upgradePolicy"] = {
        "autoUpgrade": True, "waitForCompletion": {"podSelector": "app=etl"}}
    store.create("clusterpolicies.nvidia.com", policy)
    store.create("pods", pod("ml", "etl-cpu", "gpu-0", labels={"app": "etl"}))
    store.create("pods", pod("ml", "web", "gpu-0", labels={"app": "web"}))
    objects = read_objects(load_target(str(kubeconfig)))
    assert ("ml", "etl-cpu") in objects.pods and ("ml", "web") not in objects.pods


def test_skip_label_time_comes_from_managed_fields(cluster: EmulatedCluster,
                                                   kubeconfig: Path) -> None:
    """A node held by ``nvidia.com/gpu-driver-upgrade.skip=true`` (skipped on purpose by
    k8s-operator-libs ``pkg/upgrade/upgrade_inplace.go``) is info "held by choice since" the
    time the server's managedFields give for the label, set here through the real client."""
    from kubernetes import client, config

    from gputui.domain.snapshot import SnapshotBuilder

    seed_cluster(cluster, nodes=1)
    cluster.store.mutate("nodes", "gpu-0000", None, lambda n: n["metadata"]["labels"].update(
        {"nvidia.com/gpu-driver-upgrade-state": "upgrade-required"}),
        manager="gpu-operator")
    cluster.clock.advance(7200)
    api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
    api.patch_node("gpu-0000", {"metadata": {"labels": {
        "nvidia.com/gpu-driver-upgrade.skip": "true"}}}, _preload_content=False)
    labelled = cluster.clock.now()
    cluster.clock.advance(3600)
    objects = read_objects(load_target(str(kubeconfig)))
    assert abs(objects.label_times["gpu-0000"]["nvidia.com/gpu-driver-upgrade.skip"]
               - labelled) < 2
    snap = SnapshotBuilder().build(objects, cluster.clock.now())
    (held,) = [f for f in snap.findings if f.node == "gpu-0000" and f.code == "upgrade-stalled"]
    assert held.severity.value == "info"
    assert "gpu-0000 held by choice since " in held.message and "UTC (60 min)" in held.message


def test_the_daemonset_controllers_failed_creates_are_read(cluster: EmulatedCluster,
                                                           kubeconfig: Path) -> None:
    """``upgrade-blocked`` takes a driver DaemonSet's FailedCreate as evidence that its
    missing pod stays missing: they are read from the operator namespace (and nothing else
    of its events), next to the nodes' upgrade events."""
    seed_cluster(cluster)
    cluster.store.create("events", {
        "metadata": {"name": "f1", "namespace": NS},
        "involvedObject": {"kind": "DaemonSet", "name": "nvidia-driver-daemonset"},
        "reason": "FailedCreate", "type": "Warning",
        "message": "Error creating: pods is forbidden: exceeded quota: gpu-operator"})
    cluster.store.create("events", {
        "metadata": {"name": "f2", "namespace": NS},
        "involvedObject": {"kind": "DaemonSet", "name": "nvidia-driver-daemonset"},
        "reason": "SuccessfulCreate", "message": "Created pod: x"})
    objects = read_objects(load_target(str(kubeconfig)))
    assert sorted(e["message"] for e in objects.events) == [
        "Error creating: pods is forbidden: exceeded quota: gpu-operator",
        "moved to upgrade-required"]
