"""Every API-level fault through the real client against the emulated server.

For each fault kind: the live source is synced, the fault starts, the cluster changes while
it lasts (a node joins, one leaves, a label moves, a pod comes), the fault ends, and the
source's cache must equal a fresh list taken afterwards: nothing lost, nothing duplicated,
nothing stale. The one-shot reader (``gputui check``) must get through the same faults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import gputui.sources.reflector as reflector_module
from gputui.domain.inputs import ClusterObjects
from gputui.domain.pods import as_pod_info
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.errors import SourceError
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from tests.sources.helpers import RecordingBuilder, cluster_policy, node, pod, wait_for

NS = "gpu-operator"
Started = tuple[KubeSource, RecordingBuilder, list[Any], list[SourceStatus]]

#: fault item -> what the operator must have been told while it lasted ("" = nothing: the
#: retry layer hides it), checked on the statuses the source reported
FAULTS = {
    "429:0.2%50": "",
    "500%40": "",
    "503:0.2%40": "",
    "reset%40": "",
    "latency:300": "",
    "watch-close": "",
    "watch-410": "",
    "down+3s": "reconnecting",
    "forbid:pods": "forbidden",
}


@pytest.fixture
def start_source(kubeconfig: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Started]]:
    # a forbidden feed is tried again after a minute in real life; a second here
    monkeypatch.setattr(reflector_module.Reflector, "RECHECK_SECONDS", 1.0)
    sources: list[KubeSource] = []

    def start() -> Started:
        builder = RecordingBuilder()
        source = KubeSource(load_target(str(kubeconfig)), builder=builder, coalesce=0.05,
                            rebuild_every=60, watch_timeout=5, backoff_cap=0.5, xid_every=0)
        snapshots: list[Any] = []
        statuses: list[SourceStatus] = []
        source.start(snapshots.append, statuses.append)
        sources.append(source)
        return source, builder, snapshots, statuses

    yield start
    for source in sources:
        source.stop()


def _seed(cluster: EmulatedCluster) -> None:
    for i in range(4):
        cluster.store.create("nodes", node(f"gpu-{i}"))
    cluster.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    for i in range(3):
        cluster.store.create("pods", pod(NS, f"nvidia-driver-daemonset-{i}", f"gpu-{i}",
                                         labels={"app": "nvidia-driver-daemonset"}))


def _change(cluster: EmulatedCluster) -> None:
    """What happens in the cluster while the fault lasts."""
    cluster.store.create("nodes", node("gpu-joined"))
    cluster.store.delete("nodes", "gpu-3")
    cluster.store.mutate("nodes", "gpu-1", None, lambda n: n["metadata"]["labels"].update(
        {"nvidia.com/gpu-driver-upgrade-state": "upgrade-required"}))
    cluster.store.create("pods", pod("ml", "train", "gpu-2", gpus=8))
    cluster.store.delete("pods", "nvidia-driver-daemonset-0", NS)


def fingerprint(objects: ClusterObjects) -> dict[str, Any]:
    """Every object by key and resourceVersion: equal fingerprints, equal caches."""
    def versions(items: Any) -> list[tuple[Any, str]]:
        return sorted((key, str(obj["metadata"].get("resourceVersion")))
                      for key, obj in items.items())

    pods = sorted((key, as_pod_info(pod).resource_version) for key, pod in objects.pods.items())
    return {"nodes": versions(objects.nodes), "pods": pods,
            "daemonsets": versions(objects.daemonsets),
            "policies": sorted(str(p["metadata"].get("resourceVersion"))
                               for p in objects.cluster_policies),
            "forbidden": sorted(objects.forbidden)}


def _fresh(kubeconfig: Path) -> dict[str, Any]:
    return fingerprint(read_objects(load_target(str(kubeconfig))))


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_then_recovery_equals_a_fresh_list(
        fault: str, cluster: EmulatedCluster, kubeconfig: Path,
        start_source: Callable[..., Started]) -> None:
    _seed(cluster)
    source, builder, snapshots, statuses = start_source()
    wait_for(lambda: snapshots, what="first snapshot")
    cluster.inject(fault)
    _change(cluster)
    told = FAULTS[fault]
    if told == "reconnecting":
        wait_for(lambda: any(s.connection is Connection.RECONNECTING and s.stale_since
                             and s.message for s in statuses), what="reconnecting shown")
    elif told == "forbidden":
        wait_for(lambda: "pods" in source.status().forbidden, what="pods forbidden shown")
    else:  # the fault is at work on the watches and lists meanwhile
        wait_for(lambda: sum(cluster.injector.injected.values()) > 0, what="a fault")
    wait_for(lambda: "gpu-joined" in builder.last.nodes or told == "forbidden"
             or fault.startswith("down"), what="changes seen through the fault")
    cluster.heal()
    fresh = _fresh(kubeconfig)
    assert "gpu-joined" in dict(fresh["nodes"]) and "gpu-3" not in dict(fresh["nodes"])
    wait_for(lambda: fingerprint(builder.last) == fresh,
             what=f"cache equal to a fresh list after {fault}")
    wait_for(lambda: source.status().connection is Connection.LIVE, what="live again")
    assert source.status().stale_since == 0 and not source.status().forbidden
    assert cluster.injector.injected[fault.split(":")[0].split("%")[0].split("+")[0]] > 0


@pytest.mark.parametrize("fault", ["429:0.2%50", "503:0.2%50", "500%40", "reset%40",
                                   "latency:200"])
def test_one_shot_read_gets_through(fault: str, cluster: EmulatedCluster,
                                    kubeconfig: Path) -> None:
    _seed(cluster)
    expected = _fresh(kubeconfig)
    cluster.inject(fault + ",seed:11")
    assert _fresh(kubeconfig) == expected
    assert sum(cluster.injector.injected.values()) > 0


def test_server_down_is_reported_quickly_by_a_one_shot_read(cluster: EmulatedCluster,
                                                              kubeconfig: Path) -> None:
    _seed(cluster)
    cluster.inject("down")
    with pytest.raises(SourceError, match="connection closed|reset|disconnected|reading"):
        read_objects(load_target(str(kubeconfig)))


class FailingBuilder(RecordingBuilder):
    """A domain bug on demand: builds raise while ``failing`` is set."""

    failing = False

    def build(self, objects: ClusterObjects, now: float,
              changed_nodes: frozenset[str] | None = None) -> Any:
        if self.failing:
            raise KeyError("capacity")
        return super().build(objects, now, changed_nodes)


def test_a_failed_build_is_shown_as_stale_then_recovers(cluster: EmulatedCluster,
                                                         kubeconfig: Path) -> None:
    _seed(cluster)
    builder = FailingBuilder()
    source = KubeSource(load_target(str(kubeconfig)), builder=builder, coalesce=0.05,
                        rebuild_every=0.5, watch_timeout=5, xid_every=0)
    snapshots: list[Any] = []
    source.start(snapshots.append, lambda _: None)
    try:
        wait_for(lambda: snapshots, what="first snapshot")
        # the first snapshot shows the nodes; live once every feed has listed (a moment
        # later, longer on a loaded machine)
        wait_for(lambda: source.status().connection is Connection.LIVE, what="live")
        builder.failing = True
        cluster.store.create("nodes", node("gpu-new"))
        status = wait_for(lambda: source.status().stale_since and source.status(),
                          what="stale after a failed build")
        assert status.message == "snapshot build failed: KeyError: 'capacity'"
        builder.failing = False
        wait_for(lambda: "gpu-new" in builder.last.nodes, what="recovered build")
        wait_for(lambda: source.status().stale_since == 0 and not source.status().message)
        assert builder.calls[-1][1] is None or "gpu-new" in builder.last.nodes
    finally:
        source.stop()


@pytest.mark.parametrize("fault", ["exporter-garbage", "exporter-hang"])
def test_exporters_hanging_or_answering_garbage(fault: str, start_sim_cluster: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """XIDs are read through the pod proxy: a bad exporter costs its XIDs, nothing more."""
    from gputui.sources import scrape, xids

    monkeypatch.setattr(scrape, "SCRAPE_TIMEOUT", 1.0)
    cluster, kubeconfig = start_sim_cluster("xid-storm")
    target = load_target(str(kubeconfig))
    from gputui.sources.http import KubeHttp

    http = KubeHttp(target.configuration)
    objects = read_objects(target)

    def xids_seen() -> bool:
        nonlocal objects
        objects = read_objects(target)
        return bool(xids.scrape_exporters(http, objects, 0.0).xids)

    try:
        wait_for(xids_seen, timeout=60, what="XIDs before the fault")
        cluster.inject(fault)
        reading = xids.scrape_exporters(http, objects, 0.0)
        assert reading.origin == "exporters" and reading.xids == {}
        assert cluster.injector.injected[fault] >= len(xids.exporter_pods(objects))
        cluster.heal()
        wait_for(lambda: xids.scrape_exporters(http, objects, 0.0).xids, what="XIDs again")
    finally:
        http.close()


@pytest.fixture
def start_sim_cluster(tmp_path: Path) -> Iterator[Callable[[str], tuple[EmulatedCluster, Path]]]:
    started: list[EmulatedCluster] = []

    def start(scenario: str) -> tuple[EmulatedCluster, Path]:
        cluster = EmulatedCluster(scenario, speed=100).start()
        started.append(cluster)
        return cluster, cluster.write_kubeconfig(tmp_path / f"{scenario}.kubeconfig")

    yield start
    for cluster in started:
        cluster.stop()


def test_retries_are_said_while_the_data_stays_live(
        cluster: EmulatedCluster, start_source: Callable[..., Started]) -> None:
    """Throttled while reconnecting a watch: the header hears "retrying" at once, the data
    is not called stale (nothing was lost yet), and the note goes when the server answers."""
    _seed(cluster)
    source, _, snapshots, statuses = start_source()
    wait_for(lambda: snapshots, what="first snapshot")
    # every feed listed first: a list throttled before then is "connecting", not live
    wait_for(lambda: source.status().connection is Connection.LIVE, what="live")
    cluster.inject("429:1%100,watch-close")
    wait_for(lambda: any(s.retrying for s in statuses), what="a retry reported")
    noted = next(s for s in statuses if s.retrying)
    assert "429" in noted.retrying and "retrying" in noted.retrying
    assert noted.connection is Connection.LIVE and noted.stale_since == 0
    cluster.heal()
    wait_for(lambda: not source.status().retrying,
             what="the note gone once answered")
    assert source.status().connection is Connection.LIVE
