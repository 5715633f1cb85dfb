"""Fixtures for action tests: the emulated API server, a request log, and a KubeWriter on it.

Everything goes over real HTTP through the real ``kubernetes`` client: the writer under test
is the one the app uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import read_snapshot
from gputui.sources.kubeconfig import load_target
from gputui.sources.writer import KubeWriter
from tests.apiserver.conftest import node, pod


@pytest.fixture
def server(request_log: list[tuple[str, str]], api_only: EmulatedCluster) -> EmulatedCluster:
    """``api_only`` (empty store, no controllers) with the request log installed."""
    return api_only


def writer_for(cluster: EmulatedCluster, tmp_path: Path, read_only: bool = False) -> KubeWriter:
    """A KubeWriter loaded from a kubeconfig file, as the app builds it."""
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    return KubeWriter(load_target(str(config)), read_only=read_only)


@pytest.fixture
def writer(server: EmulatedCluster, tmp_path: Path) -> Iterator[KubeWriter]:
    made = writer_for(server, tmp_path)
    yield made
    made.close()


# ---------------------------------------------------------------- a small GPU cluster
def gpu_node(name: str, pool: str = "a100", **labels: str) -> dict[str, Any]:
    """A GPU node as GFD labels it (the sources list ``nvidia.com/gpu.present=true``)."""
    made = node(name, {"nvidia.com/gpu.present": "true", "nodepool": pool,
                       "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", **labels})
    made["status"]["capacity"] = {"nvidia.com/gpu": "8"}
    made["status"]["allocatable"] = {"nvidia.com/gpu": "8"}
    return made


def gpu_pod(name: str, node_name: str, namespace: str = "ml", gpus: int = 8,
            owner: tuple[str, str] | None = ("ReplicaSet", "trainer"),
            labels: dict[str, str] | None = None, empty_dir: bool = False) -> dict[str, Any]:
    """A workload pod that requests GPUs, owned by a controller unless ``owner`` is None."""
    made = pod(name, node_name, namespace=namespace, labels=labels or {"app": "trainer"},
               owner=owner, empty_dir=empty_dir)
    made["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return made


def budget(name: str, namespace: str = "ml", app: str = "trainer",
           min_available: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": min_available}}


def snapshot_of(cluster: EmulatedCluster, tmp_path: Path) -> ClusterSnapshot:
    """One snapshot read over HTTP, as ``gputui check`` reads it."""
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    return read_snapshot(Settings(kubeconfig=str(config), namespace="gpu-operator"))


def driver_daemonset(store: Any) -> None:
    """The operator's driver DaemonSet (kubectl drain checks a DaemonSet pod's owner exists)."""
    if store.get("daemonsets.apps", "nvidia-driver-daemonset", "gpu-operator") is None:
        store.create("daemonsets.apps", {
            "metadata": {"name": "nvidia-driver-daemonset", "namespace": "gpu-operator"},
            "spec": {"selector": {"matchLabels": {"app": "driver"}},
                     "template": {"metadata": {"labels": {"app": "driver"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
