"""kubectl (1.20 and 1.35) against the emulated API server, checked against the stored objects."""

from __future__ import annotations

import json

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import KubectlRun, node, pod, seed_cluster_policy

pytestmark = pytest.mark.kubectl


def _seed_nodes(cluster: EmulatedCluster) -> None:
    cluster.store.create("nodes", node("gpu-1", {"nvidia.com/gpu.product": "H100",
                                                 "node-role.kubernetes.io/worker": ""}))
    cluster.store.create("nodes", node("gpu-2", {"nvidia.com/gpu.product": "A100"},
                                       ready=False))


def _daemonset(name: str, namespace: str) -> dict:
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"nodeSelector": {"nvidia.com/gpu.deploy.driver":
                                                            "true"},
                                           "containers": [{"name": "c", "image": "i"}]}}},
            "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                       "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1}}


def test_get_nodes_tables_and_selectors(kubectl: KubectlRun, api_only: EmulatedCluster) -> None:
    _seed_nodes(api_only)
    lines = kubectl("get", "nodes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert lines[1].split()[:3] == ["gpu-1", "Ready", "worker"]
    assert lines[2].split()[:3] == ["gpu-2", "NotReady", "<none>"]
    selected = kubectl("get", "nodes", "-l", "nvidia.com/gpu.product=A100", "-o", "name").stdout
    assert selected.split() == ["node/gpu-2"]
    wide = kubectl("get", "no", "-o", "wide").stdout.splitlines()[0].split()
    assert "INTERNAL-IP" in wide and "KERNEL-VERSION" in wide
    as_json = json.loads(kubectl("get", "node", "gpu-1", "-o", "json").stdout)
    assert as_json["metadata"]["labels"]["nvidia.com/gpu.product"] == "H100"
    for index in range(3, 8):
        api_only.store.create("nodes", node(f"gpu-{index}"))
    chunked = kubectl("get", "nodes", "--chunk-size=2", "--no-headers").stdout.splitlines()
    assert [line.split()[0] for line in chunked] == [f"gpu-{i}" for i in range(1, 8)]
    assert kubectl("get", "--raw", "/healthz").stdout == "ok"


def test_get_pods_across_namespaces_by_node(kubectl: KubectlRun,
                                            api_only: EmulatedCluster) -> None:
    store = api_only.store
    store.create("pods", pod("driver-a", "gpu-1", namespace="gpu-operator"))
    store.create("pods", pod("job", "gpu-1", namespace="default"))
    store.create("pods", pod("elsewhere", "gpu-2", namespace="default"))
    out = kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=gpu-1").stdout
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [(r[0], r[1], r[3]) for r in rows[1:]] == [("default", "job", "Running"),
                                                        ("gpu-operator", "driver-a", "Running")]
    wide = kubectl("get", "pods", "-n", "default", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:7] == ["IP", "NODE"]


def test_label_annotate_cordon_uncordon(kubectl: KubectlRun, api_only: EmulatedCluster) -> None:
    _seed_nodes(api_only)
    store = api_only.store
    kubectl("label", "node", "gpu-1", "nvidia.com/gpu.deploy.driver=false")
    kubectl("annotate", "node", "gpu-1", "gputui.io/note=maintenance window")
    stored = store.get("nodes", "gpu-1")["metadata"]
    assert stored["labels"]["nvidia.com/gpu.deploy.driver"] == "false"
    assert stored["annotations"]["gputui.io/note"] == "maintenance window"
    managers = {e["manager"] for e in stored["managedFields"]}
    assert {"kubectl-label", "kubectl-annotate"} <= managers  # kubectl's field managers
    kubectl("label", "node", "gpu-1", "nvidia.com/gpu.deploy.driver-")
    assert "nvidia.com/gpu.deploy.driver" not in store.get("nodes", "gpu-1")["metadata"]["labels"]
    bad = kubectl("label", "node", "gpu-1", "bad key=x", check=False)
    assert bad.returncode != 0
    kubectl("cordon", "gpu-1")
    assert store.get("nodes", "gpu-1")["spec"]["unschedulable"] is True
    assert "SchedulingDisabled" in kubectl("get", "node", "gpu-1").stdout
    kubectl("uncordon", "gpu-1")
    assert not store.get("nodes", "gpu-1")["spec"].get("unschedulable")


def test_drain_evicts_managed_pods_and_keeps_daemonset_pods(
        kubectl: KubectlRun, api_only: EmulatedCluster) -> None:
    _seed_nodes(api_only)
    store = api_only.store
    store.create("daemonsets.apps", _daemonset("nvidia-driver-daemonset", "gpu-operator"))
    store.create("pods", pod("nvidia-driver-daemonset-x", "gpu-1", namespace="gpu-operator",
                             owner=("DaemonSet", "nvidia-driver-daemonset")))
    store.create("pods", pod("trainer-abc", "gpu-1", owner=("ReplicaSet", "trainer"),
                             empty_dir=True))
    store.create("pods", pod("elsewhere", "gpu-2", owner=("ReplicaSet", "trainer")))
    result = kubectl("drain", "gpu-1", "--ignore-daemonsets", "--delete-emptydir-data",
                     "--timeout=20s")
    assert "evicted" in result.stdout + result.stderr
    assert store.get("pods", "trainer-abc", "default") is None
    assert store.get("pods", "nvidia-driver-daemonset-x", "gpu-operator") is not None
    assert store.get("pods", "elsewhere", "default") is not None
    assert store.get("nodes", "gpu-1")["spec"]["unschedulable"] is True


def test_drain_blocked_by_disruption_budget(kubectl: KubectlRun,
                                            api_only: EmulatedCluster) -> None:
    _seed_nodes(api_only)
    store = api_only.store
    store.create("pods", pod("db-0", "gpu-1", labels={"app": "db"}, owner=("ReplicaSet", "db")))
    store.create("poddisruptionbudgets.policy", {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    result = kubectl("drain", "gpu-1", "--ignore-daemonsets", "--timeout=2s", check=False)
    assert result.returncode != 0
    assert "disruption budget" in result.stdout + result.stderr
    assert store.get("pods", "db-0", "default") is not None


def test_cluster_policy_patch_get_and_events(kubectl: KubectlRun,
                                             api_only: EmulatedCluster) -> None:
    store = api_only.store
    seed_cluster_policy(store)
    kubectl("patch", "clusterpolicy", "cluster-policy", "--type", "merge",
            "-p", '{"spec":{"driver":{"enabled":false}}}')
    stored = store.get("clusterpolicies.nvidia.com", "cluster-policy")
    assert stored["spec"]["driver"] == {"enabled": False, "version": "550.54.15"}
    rows = [line.split() for line in kubectl("get", "clusterpolicies").stdout.splitlines()]
    assert rows[0] == ["NAME", "STATUS", "AGE"] and rows[1][:2] == ["cluster-policy", "ready"]
    store.create("events", {
        "metadata": {"name": "gpu-1.1", "namespace": "default"}, "type": "Warning",
        "reason": "DriverUpgradeFailed", "message": "driver pod failed",
        "involvedObject": {"kind": "Node", "name": "gpu-1"},
        "lastTimestamp": store.clock.rfc3339()})
    events = kubectl("get", "events").stdout.splitlines()
    assert events[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert events[1].split()[1:4] == ["Warning", "DriverUpgradeFailed", "node/gpu-1"]
    ds = _daemonset("nvidia-driver-daemonset", "gpu-operator")
    store.create("daemonsets.apps", ds)
    header = kubectl("get", "ds", "-n", "gpu-operator").stdout.splitlines()[0].split()
    assert header == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE",
                      "SELECTOR", "AGE"]


def test_create_apply_and_delete(kubectl: KubectlRun, api_only: EmulatedCluster,
                                 tmp_path: object) -> None:
    from pathlib import Path

    manifest = Path(str(tmp_path)) / "cm.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "gputui", "namespace": "default"},
                                    "data": {"a": "1"}}))
    kubectl("create", "-f", str(manifest))
    assert api_only.store.get("configmaps", "gputui", "default")["data"] == {"a": "1"}
    kubectl("apply", "-f", str(manifest))
    kubectl("delete", "configmap", "gputui")
    assert api_only.store.get("configmaps", "gputui", "default") is None
    assert kubectl("auth", "can-i", "patch", "nodes").stdout.strip() == "yes"
