"""Fixtures for API server tests: the real ``kubernetes`` client and kubectl against api_only."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from gputui.sim.cluster import EmulatedCluster
from gputui.sim.store import Store
from gputui.sim.version import GIT_VERSION


@pytest.fixture
def api(api_only: EmulatedCluster) -> Iterator[k8s.ApiClient]:
    """A ``kubernetes`` ApiClient pointed at the emulated API server."""
    config = k8s.Configuration()
    config.host = api_only.url
    config.api_key = {"authorization": "Bearer emulated-placeholder-token"}
    with k8s.ApiClient(config) as api_client:
        yield api_client


@pytest.fixture
def core(api: k8s.ApiClient) -> k8s.CoreV1Api:
    return k8s.CoreV1Api(api)


@pytest.fixture
def custom(api: k8s.ApiClient) -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(api)


class Kubectl:
    """A kubectl of one version run against the emulated cluster, with a private cache."""

    def __init__(self, binary: str, version: str, kubeconfig: Path, cache: Path) -> None:
        self.binary = binary
        self.version = tuple(int(part) for part in version.split("."))
        self._base = [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache)]

    def __call__(self, *args: str, check: bool = True,
                 timeout: float = 30) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([*self._base, *args], capture_output=True, text=True,
                                timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result


KubectlRun = Kubectl


@pytest.fixture
def kubectl(api_only: EmulatedCluster, kubectl_bin: str, kubectl_version: str,
            tmp_path: Path) -> Kubectl:
    """kubectl (each test runs with 1.20 and with 1.35) against the emulated cluster."""
    config = api_only.write_kubeconfig(tmp_path / "kubeconfig")
    return Kubectl(kubectl_bin, kubectl_version, config, tmp_path / "kube-cache")


def node(name: str, labels: dict[str, str] | None = None, ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                   "nodeInfo": {
                       "architecture": "amd64", "bootID": "b", "containerRuntimeVersion":
                       "containerd://1.7.13", "kernelVersion": "5.15.0-105-generic",
                       "kubeProxyVersion": GIT_VERSION, "kubeletVersion": GIT_VERSION,
                       "machineID": "m", "operatingSystem": "linux",
                       "osImage": "Ubuntu 22.04.4 LTS", "systemUUID": "s"},
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]},
    }


def pod(name: str, node_name: str, namespace: str = "default", labels: dict[str, str] | None = None,
        owner: tuple[str, str] | None = None, ready: bool = True,
        containers: tuple[str, ...] = ("main",), empty_dir: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner:
        metadata["ownerReferences"] = [{
            "apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}",
            "controller": True, "blockOwnerDeletion": True}]
    spec: dict[str, Any] = {"nodeName": node_name,
                            "containers": [{"name": c, "image": "busybox"} for c in containers]}
    if empty_dir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return {"metadata": metadata, "spec": spec,
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [{"name": c, "ready": ready, "restartCount": 0,
                                              "image": "busybox", "imageID": "sha256:1"}
                                             for c in containers]}}


def raw(response: Any) -> Any:
    """Decode a ``_preload_content=False`` response."""
    return json.loads(response.data)


def seed_cluster_policy(store: Store) -> None:
    store.create("clusterpolicies.nvidia.com", {
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {"driver": {"enabled": True, "version": "550.54.15"}},
        "status": {"state": "ready"}})


def http(cluster: EmulatedCluster, method: str, path: str, body: Any = None,
         content_type: str = "application/json",
         headers: dict[str, str] | None = None, text: bool = False) -> tuple[int, Any]:
    """A raw HTTP call (status, decoded JSON or text) for what typed clients cannot send."""
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes | None) else (
        body.encode() if isinstance(body, str) else json.dumps(body).encode())
    request = urllib.request.Request(cluster.url + path, data=data, method=method,
                                     headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload = error.code, error.read()
    if text:
        return status, payload.decode()
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, payload.decode()
