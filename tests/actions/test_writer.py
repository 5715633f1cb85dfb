"""KubeWriter through the real ``kubernetes`` client against the emulated API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Change, Permission, WriteError
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import writer_for
from tests.apiserver.conftest import node, pod, seed_cluster_policy


def _cordon(name: str, rv: str | None = None, patch_type: str = "merge") -> Change:
    body: Any = {"spec": {"unschedulable": True}}
    if patch_type == "json":
        body = [{"op": "add", "path": "/spec/unschedulable", "value": True}]
    return Change("patch", "Node", name, body, f"kubectl cordon {name}", "cordon",
                  patch_type=patch_type, resource_version=rv)


def test_patch_stores_the_change_under_gputuis_field_manager(
        server: EmulatedCluster, writer: KubeWriter) -> None:
    server.store.create("nodes", node("gpu-1"))
    answer = writer.patch(_cordon("gpu-1"))
    assert answer["spec"]["unschedulable"] is True
    stored = server.store.get("nodes", "gpu-1", None)
    assert stored["spec"]["unschedulable"] is True
    assert "gputui" in {entry["manager"] for entry in stored["metadata"]["managedFields"]}
    assert writer.context == "gputui-demo" and writer.user == "operator"


def test_dry_run_answers_the_result_and_stores_nothing(
        server: EmulatedCluster, writer: KubeWriter) -> None:
    server.store.create("nodes", node("gpu-1"))
    before = server.store.get("nodes", "gpu-1", None)["metadata"]["resourceVersion"]
    answer = writer.patch(_cordon("gpu-1"), dry_run=True)
    assert answer["spec"]["unschedulable"] is True
    stored = server.store.get("nodes", "gpu-1", None)
    assert "unschedulable" not in stored["spec"]
    assert stored["metadata"]["resourceVersion"] == before


@pytest.mark.parametrize("patch_type", ["merge", "json"])
def test_stale_resource_version_is_a_409_with_the_servers_reason(
        server: EmulatedCluster, writer: KubeWriter, patch_type: str) -> None:
    server.store.create("nodes", node("gpu-1"))
    current = server.store.get("nodes", "gpu-1", None)["metadata"]["resourceVersion"]
    server.store.mutate("nodes", "gpu-1", None, lambda obj: obj["metadata"]["labels"].update(
        {"touched": "yes"}), manager="someone")
    with pytest.raises(WriteError) as error:
        writer.patch(_cordon("gpu-1", rv=current, patch_type=patch_type))
    assert error.value.status == 409
    assert error.value.reason.startswith("the server refused: Operation cannot be fulfilled")
    assert error.value.reason.count(".") >= 1 and "\n" not in error.value.reason
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]
    fresh = server.store.get("nodes", "gpu-1", None)["metadata"]["resourceVersion"]
    writer.patch(_cordon("gpu-1", rv=fresh, patch_type=patch_type))
    assert server.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True


def test_cluster_policy_patch_with_precondition(server: EmulatedCluster,
                                                writer: KubeWriter) -> None:
    seed_cluster_policy(server.store)
    policy = writer.get("ClusterPolicy", "cluster-policy")
    change = Change("patch", "ClusterPolicy", "cluster-policy",
                    {"spec": {"driver": {"version": "570.86.15"}}}, "kubectl patch ...", "v",
                    resource_version=policy["metadata"]["resourceVersion"])
    writer.patch(change)
    assert server.store.get("clusterpolicies.nvidia.com", "cluster-policy", None)[
        "spec"]["driver"]["version"] == "570.86.15"
    with pytest.raises(WriteError) as error:  # the same plan again is now stale
        writer.patch(change)
    assert error.value.status == 409


def test_evict_deletes_and_a_budget_refusal_names_the_budget(
        server: EmulatedCluster, writer: KubeWriter) -> None:
    store = server.store
    store.create("pods", pod("t1", "gpu-1", labels={"app": "trainer"}))
    store.create("pods", pod("free", "gpu-1"))
    store.create("poddisruptionbudgets.policy", {
        "metadata": {"name": "trainer-pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "trainer"}}, "minAvailable": 1}})
    writer.evict("default", "free", dry_run=True)
    assert store.get("pods", "free", "default") is not None
    writer.evict("default", "free")
    assert store.get("pods", "free", "default") is None
    with pytest.raises(WriteError) as error:
        writer.evict("default", "t1")
    assert error.value.status == 429 and error.value.budget == "trainer-pdb"
    assert "disruption budget" in error.value.reason
    assert store.get("pods", "t1", "default") is not None
    with pytest.raises(WriteError) as gone:
        writer.evict("default", "free")
    assert gone.value.status == 404


def test_reads_get_and_pods_on_node(server: EmulatedCluster, writer: KubeWriter) -> None:
    server.store.create("pods", pod("a", "gpu-1"))
    server.store.create("pods", pod("b", "gpu-2", namespace="gpu-operator"))
    server.store.create("pods", pod("c", "gpu-1", namespace="ml"))
    names = sorted(p["metadata"]["name"] for p in writer.list_pods_on_node("gpu-1"))
    assert names == ["a", "c"]
    assert writer.get("Pod", "b", "gpu-operator")["spec"]["nodeName"] == "gpu-2"
    with pytest.raises(WriteError) as error:
        writer.get("Node", "missing")
    assert error.value.status == 404 and "not found" in error.value.reason


def test_can_i_asks_the_server(writer: KubeWriter) -> None:
    allowed, reason = writer.can_i(Permission("patch", "nodes"))
    assert allowed and reason == ""


def test_read_only_sends_no_write_and_no_review(
        server: EmulatedCluster, request_log: list[tuple[str, str]], tmp_path: Path) -> None:
    server.store.create("nodes", node("gpu-1"))
    server.store.create("pods", pod("p", "gpu-1"))
    read_only = writer_for(server, tmp_path, read_only=True)
    for write in (lambda: read_only.patch(_cordon("gpu-1")),
                  lambda: read_only.patch(_cordon("gpu-1"), dry_run=True),
                  lambda: read_only.evict("default", "p")):
        with pytest.raises(WriteError) as error:
            write()
        assert error.value.status == 0 and error.value.reason.startswith("read-only mode")
    assert read_only.can_i(Permission("patch", "nodes")) == (False, "read-only mode")
    assert read_only.get("Node", "gpu-1")["metadata"]["name"] == "gpu-1"
    assert [method for method, _ in request_log] == ["GET"]
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    cluster = EmulatedCluster(run_controllers=False).start()
    made = writer_for(cluster, tmp_path)
    cluster.stop()
    with pytest.raises(WriteError) as error:
        made.patch(_cordon("gpu-1"))
    assert error.value.status == 0
    assert error.value.reason.startswith("cannot reach the API server at http://127.0.0.1:")
    assert "\n" not in error.value.reason
