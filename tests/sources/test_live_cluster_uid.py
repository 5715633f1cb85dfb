"""The live source reads which cluster it watches (issue 29, item 3): every build's input
carries the ``kube-system`` namespace UID, read once when connecting; a 403 on it is a read
gap (``namespaces``), not a failure to connect. Fails on the code before the change (the
source never asked, and ``ClusterObjects`` had no place for it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gputui.sim.cluster import EmulatedCluster
from tests.sources.helpers import (  # noqa: F401
    Started,
    complete_build,
    seed_small_cluster,
    start_source,
    wait_for,
)


def _uid(cluster: EmulatedCluster) -> str:
    namespace = cluster.store.get("namespaces", "kube-system")
    assert namespace is not None
    return str(namespace["metadata"]["uid"])


def test_every_build_carries_the_kube_system_uid(
        cluster: EmulatedCluster, start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    _, builder, _, _ = start_source()
    objects, _ = wait_for(lambda: complete_build(builder), what="first complete build")
    assert objects.cluster_uid == _uid(cluster) != ""
    assert "namespaces" not in objects.unreadable


def test_a_forbidden_kube_system_is_a_read_gap_and_the_rest_is_read(
        cluster: EmulatedCluster, forbidden_paths: set[str],
        start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    forbidden_paths.add("/api/v1/namespaces/kube-system")
    _, builder, _, _ = start_source()
    objects: Any
    objects, _ = wait_for(lambda: complete_build(builder), what="first complete build")
    assert objects.cluster_uid == "" and objects.unreadable.get("namespaces") == "forbidden"
    assert sorted(objects.nodes) == ["gpu-0", "gpu-1", "gpu-2"]
