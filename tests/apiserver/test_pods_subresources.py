"""pods/eviction with disruption budgets, pods/log and pods/proxy through the client."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import http, pod


def _pdb(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "trainer"}}, **spec}}


def _eviction(name: str) -> k8s.V1Eviction:
    return k8s.V1Eviction(metadata=k8s.V1ObjectMeta(name=name, namespace="default"))


@pytest.mark.parametrize("spec", [{"minAvailable": 2}, {"maxUnavailable": 0},
                                  {"minAvailable": "100%"}, {"maxUnavailable": "0%"}])
def test_eviction_refused_by_budget(core: k8s.CoreV1Api, api_only: EmulatedCluster,
                                    spec: dict[str, Any]) -> None:
    store = api_only.store
    store.create("pods", pod("t1", "gpu-1", labels={"app": "trainer"}))
    store.create("pods", pod("t2", "gpu-2", labels={"app": "trainer"}))
    store.create("poddisruptionbudgets.policy", _pdb("trainers", **spec))
    with pytest.raises(ApiException) as error:
        core.create_namespaced_pod_eviction("t1", "default", _eviction("t1"))
    assert error.value.status == 429
    assert "Cannot evict pod as it would violate the pod's disruption budget." in error.value.body
    assert '"reason":"TooManyRequests"' in error.value.body
    assert store.get("pods", "t1", "default") is not None


@pytest.mark.parametrize(("budget", "evictable"), [(1, 1), ("50%", 2), ("34%", 2)])
def test_eviction_allowed_within_budget(core: k8s.CoreV1Api, api_only: EmulatedCluster,
                                        budget: int | str, evictable: int) -> None:
    store = api_only.store
    for name in ("t1", "t2", "t3"):
        store.create("pods", pod(name, "gpu-1", labels={"app": "trainer"}))
    store.create("pods", pod("t0", "gpu-1", labels={"app": "trainer"}, ready=False))
    store.create("poddisruptionbudgets.policy", _pdb("trainers", maxUnavailable=budget))
    core.create_namespaced_pod_eviction("t0", "default", _eviction("t0"))  # unhealthy: free
    for index in range(1, evictable + 1):
        core.create_namespaced_pod_eviction(f"t{index}", "default", _eviction(f"t{index}"))
        assert store.get("pods", f"t{index}", "default") is None
    last = f"t{evictable + 1}"
    with pytest.raises(ApiException) as error:  # the evicted pods are not back yet
        core.create_namespaced_pod_eviction(last, "default", _eviction(last))
    assert error.value.status == 429 and store.get("pods", last, "default") is not None
    status = store.get("poddisruptionbudgets.policy", "trainers", "default")["status"]
    assert set(status["disruptedPods"]) == {f"t{i}" for i in range(1, evictable + 1)}
    store.create("pods", pod("free", "gpu-1", labels={"app": "other"}))
    code, body = http(api_only, "POST", "/api/v1/namespaces/default/pods/free/eviction",
                      {"apiVersion": "policy/v1beta1", "kind": "Eviction",
                       "metadata": {"name": "free"}})
    assert code == 201 and body["status"] == "Success"
    assert store.get("pods", "free", "default") is None


def test_eviction_dry_run_and_missing_pod(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    api_only.store.create("pods", pod("p", "gpu-1"))
    code, _ = http(api_only, "POST", "/api/v1/namespaces/default/pods/p/eviction?dryRun=All",
                   {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}})
    assert code == 201 and api_only.store.get("pods", "p", "default") is not None
    with pytest.raises(ApiException) as error:
        core.create_namespaced_pod_eviction("nope", "default", _eviction("nope"))
    assert error.value.status == 404


def test_pod_log(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store, side = api_only.store, api_only.nodeside
    store.create("pods", pod("driver", "gpu-1", namespace="gpu-operator",
                             containers=("nvidia-driver-ctr",)))
    store.create("pods", pod("two", "gpu-1", namespace="gpu-operator", containers=("a", "b")))
    for index in range(5):
        side.log("gpu-operator", "driver", "nvidia-driver-ctr", f"line {index}")
    side.log("gpu-operator", "two", "b", "from b")
    assert core.read_namespaced_pod_log("driver", "gpu-operator") == \
        "".join(f"line {i}\n" for i in range(5))
    assert core.read_namespaced_pod_log("driver", "gpu-operator", tail_lines=2,
                                        timestamps=True) == "line 3\nline 4\n"
    assert core.read_namespaced_pod_log("two", "gpu-operator", container="b") == "from b\n"
    for container in (None, "zzz"):
        with pytest.raises(ApiException) as error:
            core.read_namespaced_pod_log("two", "gpu-operator", container=container)
        assert error.value.status == 400
    with pytest.raises(ApiException) as error:
        core.read_namespaced_pod_log("gone", "gpu-operator")
    assert error.value.status == 404


def test_pod_proxy(core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    store, side = api_only.store, api_only.nodeside
    store.create("pods", pod("dcgm", "gpu-1", namespace="gpu-operator"))
    calls: list[tuple[str, str]] = []

    async def metrics(method: str, path: str) -> tuple[int, str, bytes]:
        calls.append((method, path))
        return 200, "text/plain; version=0.0.4", b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 97\n'

    side.serve("gpu-operator", "dcgm", 9400, metrics)
    text = core.connect_get_namespaced_pod_proxy_with_path("dcgm:9400", "gpu-operator", "metrics")
    assert "DCGM_FI_DEV_GPU_UTIL" in text
    code, body = http(api_only, "GET", "/api/v1/namespaces/gpu-operator/pods/dcgm/proxy/metrics"
                      "?x=1", text=True)
    assert code == 200 and "97" in body
    assert calls[-1] == ("GET", "/metrics?x=1")
    code, _ = http(api_only, "GET", "/api/v1/namespaces/gpu-operator/pods/dcgm:1234/proxy/")
    assert code == 503
    code, _ = http(api_only, "GET", "/api/v1/namespaces/gpu-operator/pods/nope:9400/proxy/m")
    assert code == 404
