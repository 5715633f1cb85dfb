"""What the source tests (and others seeding an emulated store) share, one copy each: objects
to seed the emulated store with, the live source started on it, the answers of a hostile
server, and small waiting helpers. Test modules import these from here, never from one
another (``tests/meta/test_test_imports.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import SourceStatus
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from tests.conftest import hook_server_requests

GPU = {"nvidia.com/gpu.present": "true"}


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": dict(GPU if labels is None else labels)},
            "status": {"images": [{"names": ["nvcr.io/nvidia/driver:550"], "sizeBytes": 1}],
                       "nodeInfo": {"kernelVersion": "6.8.0"},
                       "capacity": {"nvidia.com/gpu": "8"}}}


def pod(namespace: str, name: str, node_name: str | None, gpus: int = 0,
        labels: dict[str, str] | None = None, phase: str = "Running") -> dict[str, Any]:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox",
                                            "resources": resources,
                                            "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                            "volumes": [{"name": "v", "hostPath": {"path": "/v"}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": spec, "status": {"phase": phase}}


def cluster_policy(namespace: str, name: str = "cluster-policy") -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
            "metadata": {"name": name}, "spec": {"driver": {"enabled": True}},
            "status": {"state": "ready", "namespace": namespace}}


def upgrade_event(node_name: str, name: str, message: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": node_name},
            "reason": "GPUDriverUpgrade", "message": message, "type": "Normal"}


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Poll until ``predicate()`` is truthy; fail the test with ``what`` otherwise.

    The ceiling is generous (a passing test never waits for it): the suite runs in parallel
    on two shared cores, where a first list can take many times its quiet-machine time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or predicate}")


class RecordingBuilder:
    """Stands in for the domain builder: records what the source asked it to build."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[ClusterObjects, frozenset[str] | None]] = []

    def build(self, objects: ClusterObjects, now: float,
              changed_nodes: frozenset[str] | None = None) -> ClusterSnapshot:
        with self.lock:
            self.calls.append((objects, changed_nodes))
        return replace(EMPTY_SNAPSHOT, generated_at=now, context=objects.context,
                       forbidden=objects.forbidden, loading=objects.loading)

    @property
    def last(self) -> ClusterObjects:
        with self.lock:
            return self.calls[-1][0]

    def count(self) -> int:
        with self.lock:
            return len(self.calls)


def hold_operand_pods(monkeypatch: Any) -> threading.Event:
    """Hold every list of the operand pod feed until the returned event is set (30 s at
    most): the nodes then show while the pods are "still being read"."""
    import gputui.sources.reflector as reflector_module

    release = threading.Event()
    original = reflector_module.list_feed

    def slow_pods(http: Any, feed: Any, *rest: Any) -> Any:
        if feed.name == "pods":
            release.wait(30)
        return original(http, feed, *rest)

    monkeypatch.setattr(reflector_module, "list_feed", slow_pods)
    return release


NS = "gpu-operator"
NODES = ("gpu-0", "gpu-1", "gpu-2")


def healthy_node(name: str) -> dict[str, object]:
    """A Ready GPU node whose eight GPUs are allocatable."""
    made = node(name)
    made["status"].update(allocatable={"nvidia.com/gpu": "8"},  # type: ignore[union-attr]
                          conditions=[{"type": "Ready", "status": "True"}])
    return made


def seed_gpu_nodes(api_only: EmulatedCluster, exporters: bool = True) -> None:
    """A ClusterPolicy and the three healthy :data:`NODES`, each with a DCGM exporter pod
    unless ``exporters`` is False."""
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    for name in NODES:
        api_only.store.create("nodes", healthy_node(name))
        if exporters:
            api_only.store.create("pods", pod(NS, f"nvidia-dcgm-exporter-{name}", name,
                                              labels={"app": "nvidia-dcgm-exporter"}))


#: a JSON value nested 3,000 levels (deeper than a decoder should follow)
DEEP = b'{"a":' * 3000 + b"1" + b"}" * 3000


def policy_bytes(name: str, status: bytes) -> bytes:
    """A ClusterPolicy as the server's bytes, its status ``status`` verbatim."""
    return (b'{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"'
            + name.encode() + b'","resourceVersion":"7"},"spec":{},"status":' + status + b"}")


def page_bytes(*items: bytes) -> bytes:
    """A ClusterPolicy list page of these items, as the server's bytes."""
    return (b'{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","metadata":'
            b'{"resourceVersion":"9"},"items":[' + b",".join(items) + b"]}")


@pytest.fixture
def deep_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's ClusterPolicy list holds one policy nested 3,000 levels (request it
    before the cluster fixture: the hook wraps servers started after it)."""
    def answer(request: web.Request) -> web.StreamResponse | None:
        if request.path == "/apis/nvidia.com/v1/clusterpolicies" and "watch" not in request.query:
            return web.Response(body=page_bytes(policy_bytes("cluster-policy", DEEP)),
                                content_type="application/json")
        return None

    hook_server_requests(monkeypatch, answer)


#: a node's ``managedFields``: who last set which field, and when
MANAGED = [
    {"manager": "nvidia-mig-manager", "operation": "Update", "time": "2026-11-29T10:00:00Z",
     "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/mig.config.state": {}}}}},
    {"manager": "gpu-operator", "operation": "Update", "time": "2026-11-29T11:00:00Z",
     "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu.present": {},
                                              "f:nvidia.com/mig.config.state": {}}},
                  "f:spec": {"f:unschedulable": {}}}},
    {"manager": "kubelet", "operation": "Update", "time": "2026-11-29T12:00:00Z",
     "fieldsV1": {"f:status": {"f:conditions": {}}}},
]


#: (the source, its builder, the snapshots it delivered, the statuses it reported)
Started = tuple[KubeSource, RecordingBuilder, list[Any], list[SourceStatus]]


@pytest.fixture
def start_source(kubeconfig: Path) -> Iterator[Callable[..., Started]]:
    """``start_source(path, **options)``: a started :class:`KubeSource` (fast coalescing and
    backoff), stopped after the test."""
    sources: list[KubeSource] = []

    def start(path: Path = kubeconfig, **options: Any) -> Started:
        builder = RecordingBuilder()
        settings: dict[str, Any] = {"coalesce": 0.05, "rebuild_every": 60,
                                    "watch_timeout": 5, "backoff_cap": 0.3}
        settings.update(options)
        source = KubeSource(load_target(str(path)), builder=builder, **settings)
        snapshots: list[Any] = []
        statuses: list[SourceStatus] = []
        source.start(snapshots.append, statuses.append)
        sources.append(source)
        return source, builder, snapshots, statuses

    yield start
    for source in sources:
        source.stop()


def seed_small_cluster(cluster: EmulatedCluster, nodes: int = 3) -> None:
    """``nodes`` GPU nodes, a ClusterPolicy and one driver pod on ``gpu-0``."""
    for i in range(nodes):
        cluster.store.create("nodes", node(f"gpu-{i}"))
    cluster.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    cluster.store.create("pods", pod(NS, "nvidia-driver-daemonset-a", "gpu-0",
                                     labels={"app": "nvidia-driver-daemonset"}))


def complete_build(builder: RecordingBuilder) -> tuple[Any, Any] | None:
    """The first build made once every feed was listed (earlier ones show nodes only)."""
    with builder.lock:
        return next((call for call in builder.calls if not call[0].loading), None)
