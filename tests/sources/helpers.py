"""Objects to seed the emulated store with, and small waiting helpers for source tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot

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

    def slow_pods(http: Any, feed: Any, gate: Any = None, refused: Any = None) -> Any:
        if feed.name == "pods":
            release.wait(30)
        return original(http, feed, gate, refused)

    monkeypatch.setattr(reflector_module, "list_feed", slow_pods)
    return release
