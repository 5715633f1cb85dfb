"""The live list+watch source through real HTTP: updates, resilience, 403, stop."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gputui.sources.reflector as reflector_module
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from tests.sources.helpers import (  # noqa: F401
    RecordingBuilder,
    Started,
    cluster_policy,
    complete_build,
    hold_operand_pods,
    node,
    pod,
    seed_small_cluster,
    start_source,
    wait_for,
)

NS = "gpu-operator"


@pytest.fixture
def list_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the feeds listed (a relist shows up here; a resumed watch does not)."""
    calls: list[str] = []
    original = reflector_module.list_feed

    def counting(http: Any, feed: Any, *rest: Any) -> Any:
        calls.append(feed.name)
        return original(http, feed, *rest)

    monkeypatch.setattr(reflector_module, "list_feed", counting)
    return calls


def set_label(cluster: EmulatedCluster, name: str, key: str, value: str) -> None:
    cluster.store.mutate("nodes", name, None,
                         lambda n: n["metadata"]["labels"].update({key: value}))


def label(builder: RecordingBuilder, name: str, key: str) -> str | None:
    found = builder.last.nodes.get(name)
    return None if found is None else found["metadata"]["labels"].get(key)


def test_snapshot_after_sync_then_watch_updates(cluster: EmulatedCluster,
                                                start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    source, builder, _, _ = start_source()
    first, changed = wait_for(lambda: complete_build(builder), what="first complete snapshot")
    assert changed is None  # the first complete build is a full one
    assert sorted(first.nodes) == ["gpu-0", "gpu-1", "gpu-2"]
    assert first.operator_namespace == NS and (NS, "nvidia-driver-daemonset-a") in first.pods
    assert source.status().connection is Connection.LIVE and source.status().last_update > 0

    set_label(cluster, "gpu-1", "nvidia.com/mig.config.state", "pending")
    wait_for(lambda: label(builder, "gpu-1", "nvidia.com/mig.config.state") == "pending")
    assert builder.calls[-1][1] == frozenset({"gpu-1"})  # cost follows the change
    assert "nvidia.com/mig.config.state" in builder.last.label_times["gpu-1"]

    cluster.store.create("pods", pod("ml", "train", "gpu-2", gpus=8))
    wait_for(lambda: ("ml", "train") in builder.last.pods)
    assert builder.calls[-1][1] == frozenset({"gpu-2"})

    cluster.store.delete("nodes", "gpu-0")
    wait_for(lambda: "gpu-0" not in builder.last.nodes)


def test_bursts_are_coalesced(cluster: EmulatedCluster,
                              start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    _, builder, snapshots, _ = start_source()
    wait_for(lambda: snapshots)
    before = builder.count()
    for i in range(200):
        set_label(cluster, f"gpu-{i % 3}", "burst", str(i))
    wait_for(lambda: label(builder, "gpu-1", "burst") == "199")
    assert builder.count() - before < 100


def test_restart_resumes_the_watch(cluster: EmulatedCluster, restart: Any,
                                   start_source: Callable[..., Started],
                                   list_calls: list[str]) -> None:
    """API server gone mid-watch: stale + reconnecting, then resume from resourceVersion."""
    seed_small_cluster(cluster)
    source, builder, _, statuses = start_source()
    wait_for(lambda: complete_build(builder), what="every feed listed")
    lists_before = len(list_calls)
    cluster.stop()
    status = wait_for(lambda: source.status().connection is Connection.RECONNECTING
                      and "connection refused" in source.status().message
                      and source.status(), what="reconnecting")
    assert status.stale_since > 0 and status.message.endswith("; retrying")
    set_label(cluster, "gpu-1", "while-down", "yes")
    restart(cluster)
    wait_for(lambda: label(builder, "gpu-1", "while-down") == "yes", what="missed change")
    wait_for(lambda: source.status().connection is Connection.LIVE)
    assert source.status().stale_since == 0
    assert len(list_calls) == lists_before  # resumed, not relisted
    assert any(s.connection is Connection.RECONNECTING for s in statuses)


def test_expired_watch_relists(cluster: EmulatedCluster, restart: Any,
                               start_source: Callable[..., Started],
                               list_calls: list[str]) -> None:
    """A resourceVersion the server no longer keeps (410 Gone) leads to a fresh list."""
    seed_small_cluster(cluster)
    source, builder, snapshots, _ = start_source()
    wait_for(lambda: snapshots)
    cluster.stop()
    wait_for(lambda: source.status().connection is Connection.RECONNECTING)
    cluster.store.delete("nodes", "gpu-2")
    set_label(cluster, "gpu-1", "after-compaction", "yes")
    cluster.store.compact()
    restart(cluster)
    wait_for(lambda: label(builder, "gpu-1", "after-compaction") == "yes")
    assert "gpu-2" not in builder.last.nodes
    assert list_calls.count("nodes") == 2


def test_forbidden_feed_is_reported_and_the_rest_works(
        cluster: EmulatedCluster, forbidden_paths: set[str],
        start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    forbidden_paths.add("/api/v1/events")
    source, builder, _, _ = start_source()
    wait_for(lambda: complete_build(builder))
    status = source.status()
    assert status.connection is Connection.LIVE and status.forbidden == ("events",)
    assert "forbidden: events" in status.message
    assert builder.last.forbidden == frozenset({"events"}) and len(builder.last.nodes) == 3


def test_namespace_found_later_from_the_cluster_policy(
        cluster: EmulatedCluster, start_source: Callable[..., Started]) -> None:
    cluster.store.create("nodes", node("gpu-0"))
    _, builder, snapshots, _ = start_source()
    wait_for(lambda: snapshots)
    assert builder.last.operator_namespace is None and not builder.last.pods
    cluster.store.create("pods", pod(NS, "nvidia-operator-validator-x", "gpu-0"))
    cluster.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    wait_for(lambda: (NS, "nvidia-operator-validator-x") in builder.last.pods)
    assert builder.last.operator_namespace == NS


def test_server_down_at_start_then_up(tmp_path: Path,
                                      start_source: Callable[..., Started]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    later = EmulatedCluster(run_controllers=False, port=port)
    path = later.write_kubeconfig(tmp_path / "kc")
    source, _, snapshots, _ = start_source(path)
    status = wait_for(lambda: source.status().message and source.status())
    assert status.connection is Connection.CONNECTING and "connection refused" in status.message
    later.start()
    try:
        later.store.create("nodes", node("gpu-0"))
        wait_for(lambda: snapshots, what="snapshot after the server came up")
        # the first snapshot comes once the nodes are listed; live once every feed answered
        wait_for(lambda: source.status().connection is Connection.LIVE, what="live")
        assert source.status().connection is Connection.LIVE
    finally:
        source.stop()
        later.stop()


def test_stop_returns_promptly(cluster: EmulatedCluster,
                               start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    source, _, snapshots, _ = start_source(watch_timeout=300)
    wait_for(lambda: snapshots)
    began = time.monotonic()
    source.stop()
    # stop waits at most 2 s for its threads; the watches themselves would hang on for 300 s.
    # Ceilings far below that, polled, so a loaded machine's slow thread exit is no failure
    assert time.monotonic() - began < 15.0
    wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("gputui-feed")
                          and t.is_alive()], timeout=30, what="every feed thread ended")


def test_pod_log_and_events(cluster: EmulatedCluster,
                            start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    cluster.nodeside.log(NS, "nvidia-driver-daemonset-a", "main", "loading nvidia.ko")
    cluster.nodeside.log(NS, "nvidia-driver-daemonset-a", "main", "done")
    for i, reason in enumerate(["Pulled", "BackOff"]):
        cluster.store.create("events", {
            "metadata": {"name": f"ev{i}", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": "nvidia-driver-daemonset-a",
                               "namespace": NS},
            "reason": reason, "lastTimestamp": f"2026-11-29T10:0{i}:00Z"})
    source, _, _, _ = start_source()
    assert source.pod_log(NS, "nvidia-driver-daemonset-a", "main")[-2:] == [
        "loading nvidia.ko", "done"]
    events = source.pod_events(NS, "nvidia-driver-daemonset-a")
    assert [e["reason"] for e in events] == ["Pulled", "BackOff"]


def test_idle_source_builds_no_full_snapshot(cluster: EmulatedCluster,
                                             start_source: Callable[..., Started]) -> None:
    """Only the first build is full; idle ticks pass the empty change set (the domain
    builder re-checks its own time thresholds), and bookmarks wake no build at all."""
    seed_small_cluster(cluster)
    _, builder, _, _ = start_source(rebuild_every=0.2)
    wait_for(lambda: complete_build(builder))
    began = time.monotonic()

    def complete_changes() -> list[Any]:
        with builder.lock:
            return [changed for objects, changed in builder.calls if not objects.loading]

    time.sleep(1.5)  # several idle ticks, and bookmarks on every watch each second
    wait_for(lambda: len(complete_changes()) >= 4, what="idle ticks")  # slower when loaded
    elapsed = time.monotonic() - began
    changes = complete_changes()
    assert changes[0] is None and len(changes) >= 4
    assert all(changed == frozenset() for changed in changes[1:])
    assert len(changes) < elapsed / 0.2 + 4  # ticks, not one build per bookmark


def test_bookmarks_wake_no_build(cluster: EmulatedCluster,
                                 start_source: Callable[..., Started]) -> None:
    seed_small_cluster(cluster)
    source, builder, snapshots, _ = start_source()  # rebuild_every=60
    wait_for(lambda: snapshots)
    time.sleep(0.3)
    before, touched = builder.count(), source.status().last_update
    time.sleep(1.5)  # the emulated server sends a bookmark on each watch every second
    # the data is still proved current (polled: a loaded machine delays the bookmark)
    wait_for(lambda: source.status().last_update > touched, what="a bookmark")
    assert builder.count() == before


def test_gc_is_paused_until_the_first_snapshot_and_never_left_off(
        cluster: EmulatedCluster, start_source: Callable[..., Started]) -> None:
    import gc

    assert gc.isenabled()
    seed_small_cluster(cluster)
    source, _, snapshots, _ = start_source()
    wait_for(lambda: snapshots)
    wait_for(gc.isenabled, what="GC back on after the first snapshot")
    source.stop()
    assert gc.isenabled()


def test_gc_pause_ends_when_no_snapshot_comes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              start_source: Callable[..., Started]) -> None:
    import gc

    import gputui.sources.kube as kube_module

    monkeypatch.setattr(kube_module, "GC_PAUSE_LIMIT", 0.0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    nowhere = EmulatedCluster(run_controllers=False, port=port)
    source, _, snapshots, _ = start_source(nowhere.write_kubeconfig(tmp_path / "kc"),
                                           rebuild_every=0.1)
    wait_for(gc.isenabled, what="GC back on while the server stays unreachable")
    assert not snapshots
    source.stop()


def test_waitforcompletion_selector_set_later_brings_its_pods(
        cluster: EmulatedCluster, start_source: Callable[..., Started]) -> None:
    """When the policy starts waiting for ``app=etl`` pods, the GPU pod feed restarts and
    keeps them, GPU or not (the upgrade controller waits for every one)."""
    seed_small_cluster(cluster)
    cluster.store.create("pods", pod("ml", "etl-cpu", "gpu-1", labels={"app": "etl"}))
    _, builder, snapshots, _ = start_source()
    wait_for(lambda: snapshots, what="first snapshot")
    assert ("ml", "etl-cpu") not in builder.last.pods
    cluster.store.mutate("clusterpolicies.nvidia.com", "cluster-policy", None,
                         lambda p: p["spec"]["driver"].update(upgradePolicy={
                             "autoUpgrade": True,
                             "waitForCompletion": {"podSelector": "app=etl"}}))
    wait_for(lambda: ("ml", "etl-cpu") in builder.last.pods, what="selected pod kept")
    assert (NS, "nvidia-driver-daemonset-a") in builder.last.pods


def test_nodes_are_shown_before_the_pods_are_listed(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Progressive load: a snapshot of the nodes arrives while the operand pods are still
    being listed; it says so (``loading``), claims no finding and no pipeline, and the
    header's facts are not guessed (no "policy missing", no findings); once the pods are
    in, a complete snapshot follows with the driver pod in the pipeline."""
    seed_small_cluster(cluster)
    release = hold_operand_pods(monkeypatch)
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, xid_every=0)
    snapshots: list[Any] = []
    source.start(snapshots.append, lambda _: None)
    try:
        early = wait_for(lambda: snapshots and snapshots[-1], what="a first snapshot")
        assert sorted(early.nodes) == ["gpu-0", "gpu-1", "gpu-2"]
        assert "pods" in early.loading and early.findings == ()
        view = early.nodes["gpu-0"]
        assert view.loading and view.findings == () and view.pipeline.stages == ()
        release.set()
        done = wait_for(lambda: not snapshots[-1].loading and snapshots[-1],
                        what="the complete snapshot")
        driver = done.nodes["gpu-0"].pipeline.stage("driver")
        assert not done.nodes["gpu-0"].loading and driver is not None
        assert done.cluster_policy.state != "missing"
    finally:
        release.set()
        source.stop()


def test_a_gated_feed_decodes_after_the_gate_opens(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live source gates every feed but the GPU nodes: their pages are fetched at once,
    decoded only once the nodes are listed (so the node rows show first)."""
    from gputui.sources.decode import FeedDecoder
    from gputui.sources.http import KubeHttp
    from gputui.sources.resources import namespace_feeds

    seed_small_cluster(cluster)
    decoded: list[int] = []
    original = FeedDecoder.page

    def counting(self: FeedDecoder[Any], data: bytes) -> Any:
        decoded.append(len(data))
        return original(self, data)

    monkeypatch.setattr(FeedDecoder, "page", counting)
    http = KubeHttp(load_target(str(kubeconfig)).configuration)
    gate = threading.Event()
    pods = next(f for f in namespace_feeds(NS) if f.name == "pods")
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(
        reflector_module.list_feed(http, pods, gate.wait)))
    worker.start()
    try:
        worker.join(0.5)
        assert worker.is_alive() and decoded == []  # fetched, waiting for the gate
        gate.set()
        worker.join(10)
        items, version = result[0]
        assert [pod.name for pod, _ in items] == ["nvidia-driver-daemonset-a"]
        assert version and len(decoded) == 1
    finally:
        gate.set()
        http.close()


def test_no_gated_page_is_decoded_before_the_first_snapshot_is_out(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first build has the interpreter to itself: the pod, policy and ConfigMap pages
    are fetched meanwhile but decoded only once the node rows have been handed over."""
    from gputui.domain.snapshot import SnapshotBuilder
    from gputui.sources.decode import NODES, FeedDecoder

    seed_small_cluster(cluster)
    order: list[str] = []
    original = FeedDecoder.page

    def noting(self: FeedDecoder[Any], data: bytes) -> Any:
        order.append("nodes page" if self is NODES else "gated page")
        return original(self, data)

    monkeypatch.setattr(FeedDecoder, "page", noting)
    build = SnapshotBuilder.build

    def slow_first_build(self: SnapshotBuilder, *args: Any, **kwargs: Any) -> Any:
        if "snapshot" not in order:
            time.sleep(0.5)  # a 15,000-node first build: the gated pages are in by now
        return build(self, *args, **kwargs)

    monkeypatch.setattr(SnapshotBuilder, "build", slow_first_build)
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, xid_every=0)
    snapshots: list[Any] = []

    def delivered(snapshot: Any) -> None:
        order.append("snapshot")
        snapshots.append(snapshot)

    source.start(delivered, lambda _: None)
    try:
        wait_for(lambda: snapshots and not snapshots[-1].loading, what="a complete snapshot")
        first = order.index("snapshot")
        assert "gated page" in order and "gated page" not in order[:first]
        assert "nodes page" in order[:first]
    finally:
        source.stop()


def test_a_feed_that_hits_a_bug_says_so_and_relists_instead_of_dying(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-API exception in a feed thread (a decoding bug on one odd object) used to end
    that feed silently: its part of the screen froze while the header said live. Now the
    header names the error and the feed starts over from a fresh list."""
    from gputui.sources import decode

    seed_small_cluster(cluster)
    failures = [TypeError("'NoneType' object is not subscriptable")]
    finish = decode.OPERATOR_PODS.finish

    def flaky(pod: Any) -> Any:
        if failures:
            raise failures.pop()
        return finish(pod)

    monkeypatch.setattr(decode.OPERATOR_PODS, "finish", flaky)
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, backoff_cap=0.2, xid_every=0)
    snapshots: list[Any] = []
    statuses: list[SourceStatus] = []
    source.start(snapshots.append, statuses.append)
    try:
        done = wait_for(lambda: snapshots and not snapshots[-1].loading and snapshots[-1],
                        what="a complete snapshot after the relist")
        assert done.nodes["gpu-0"].pipeline.stage("driver") is not None
        said = [s.message for s in statuses if "TypeError" in s.message]
        assert said and "relisting" in said[0]
        assert source.status().connection is Connection.LIVE and not failures
    finally:
        source.stop()


def test_the_first_node_list_shows_rows_page_by_page(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 5,000 nodes the node list is ten pages: the rows of the first page show while the
    rest is read (``nodes`` still loading, no finding claimed), the complete list follows,
    and every node is then built once more only if its object changed (not for being
    re-listed)."""
    seed_small_cluster(cluster, nodes=600)  # two pages of 500
    first_page_in, go_on = threading.Event(), threading.Event()
    original = reflector_module.Reflector._page_in

    def held(self: Any, items: list[Any]) -> None:
        original(self, items)
        if not first_page_in.is_set():
            first_page_in.set()
            go_on.wait(30)  # the second page waits until the first page's rows were seen

    monkeypatch.setattr(reflector_module.Reflector, "_page_in", held)
    snapshots: list[Any] = []
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, xid_every=0)
    source.start(snapshots.append, lambda _: None)
    try:
        early = wait_for(lambda: snapshots and snapshots[-1], what="rows of the first page")
        assert len(early.nodes) == 500 and "nodes" in early.loading
        assert early.findings == () and all(view.loading for view in early.nodes.values())
        go_on.set()
        done = wait_for(lambda: not snapshots[-1].loading and snapshots[-1],
                        what="the complete snapshot")
        assert len(done.nodes) == 600
    finally:
        go_on.set()
        source.stop()


def test_a_relist_of_the_nodes_is_one_swap_not_pages(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages go into the cache one by one only on the first list: a relist (an expired
    watch) must not show a part of the nodes as if the rest were gone."""
    seed_small_cluster(cluster, nodes=3)
    pages: list[str] = []
    original = reflector_module.Reflector._page_in

    def counted(self: Any, items: list[Any]) -> None:
        pages.append(self.feed.name)
        original(self, items)

    monkeypatch.setattr(reflector_module.Reflector, "_page_in", counted)
    target = load_target(str(kubeconfig))
    from gputui.sources.cache import ObjectCache
    from gputui.sources.http import KubeHttp
    from gputui.sources.resources import cluster_feeds

    feed = next(f for f in cluster_feeds() if f.name == "nodes")
    calls: list[int] = []
    reflector = reflector_module.Reflector(KubeHttp(target.configuration), feed, ObjectCache(),
                                           _Quiet(), on_first_pages=lambda: calls.append(1))
    reflector._list()
    reflector._list()  # a relist
    assert pages == ["nodes"] and calls == [1]


class _Quiet:
    """A reflector's owner that listens to nothing."""

    def feed_state(self, feed: str, state: Any, message: str) -> None:
        return None

    def feed_changed(self) -> None:
        return None

    def feed_alive(self) -> None:
        return None


def _noting_pages(monkeypatch: pytest.MonkeyPatch, order: list[str]) -> None:
    """Note each decoded page in ``order``: the GPU nodes' or another list's."""
    from gputui.sources.decode import NODES, FeedDecoder

    original = FeedDecoder.page

    def noting(self: FeedDecoder[Any], data: bytes) -> Any:
        order.append("nodes page" if self is NODES else "gated page")
        return original(self, data)

    monkeypatch.setattr(FeedDecoder, "page", noting)


def _started_for_a_screen(kubeconfig: Path, foreground: Any) -> tuple[KubeSource, list[Any]]:
    """A live source shown by the screen ``foreground`` speaks for, started; and the list
    of the snapshots it delivers."""
    source = KubeSource(load_target(str(kubeconfig)), coalesce=0.05, rebuild_every=60,
                        watch_timeout=5, xid_every=0, foreground=foreground)
    snapshots: list[Any] = []
    source.start(snapshots.append, lambda _: None)
    return source, snapshots


def test_the_other_lists_decode_once_the_screen_painted_the_node_rows(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a screen, the pod, policy and ConfigMap pages wait until it says it painted a
    snapshot of the whole node list (not merely until that snapshot was built): the first
    frame has the interpreter to itself."""
    from gputui.sources.foreground import Foreground

    seed_small_cluster(cluster)
    order: list[str] = []
    _noting_pages(monkeypatch, order)
    foreground = Foreground()
    foreground.expect_screen()
    foreground.listening()
    source, snapshots = _started_for_a_screen(kubeconfig, foreground)
    try:
        wait_for(lambda: any("nodes" not in s.loading for s in snapshots),
                 what="a snapshot of the whole node list")
        time.sleep(0.5)  # window: unheld, the gated pages would be decoded by now
        assert "nodes page" in order and "gated page" not in order
        assert snapshots[-1].loading  # the pods are not read: still loading
        order.append("painted")
        foreground.shown(snapshots[-1].loading)
        wait_for(lambda: not snapshots[-1].loading, what="a complete snapshot")
        assert "gated page" in order[order.index("painted"):]
    finally:
        source.stop()


def test_no_snapshot_of_part_of_the_node_list_is_built_before_the_screen_is_up(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started before the UI exists (``gputui`` does, so the lists transfer while it is
    imported), the source builds no snapshot of a part of the node list for nobody: only
    the newest would be handed over, and each such build cost the UI's start a second of
    interpreter at 5,000 nodes. Once the screen listens, a part is built and shown."""
    from gputui.sources.cache import ObjectCache
    from gputui.sources.foreground import Foreground

    seed_small_cluster(cluster)
    paged_in = threading.Event()
    list_done = threading.Event()
    replace = ObjectCache.replace

    def held_node_list(self: ObjectCache, feed: str, items: Any) -> Any:
        if feed == "nodes" and not list_done.is_set():
            paged_in.set()  # the page is in the cache; the list is not done
            list_done.wait(30)
        return replace(self, feed, items)

    monkeypatch.setattr(ObjectCache, "replace", held_node_list)
    foreground = Foreground()
    foreground.expect_screen()
    source, snapshots = _started_for_a_screen(kubeconfig, foreground)
    try:
        assert paged_in.wait(30)
        time.sleep(0.5)  # window: unheld, the page's build would be delivered by now
        assert snapshots == []
        foreground.listening()
        wait_for(lambda: snapshots, what="the part shown once the screen listens")
        assert "nodes" in snapshots[0].loading and set(snapshots[0].nodes) == {
            "gpu-0", "gpu-1", "gpu-2"}
        list_done.set()
        wait_for(lambda: "nodes" not in snapshots[-1].loading, what="the whole node list")
    finally:
        list_done.set()
        source.stop()


def test_a_key_holds_the_next_list_page_until_its_claim_ends(
        cluster: EmulatedCluster, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys first: while the screen answers a key, the list pages already fetched wait to
    be decoded (the decoding would hold the interpreter the answer needs)."""
    from gputui.sources.foreground import Foreground
    from gputui.sources.http import KubeHttp
    from gputui.sources.resources import namespace_feeds

    seed_small_cluster(cluster)
    order: list[str] = []
    _noting_pages(monkeypatch, order)
    foreground = Foreground()
    foreground.claim(3600)
    http = KubeHttp(load_target(str(kubeconfig)).configuration)
    pods = next(f for f in namespace_feeds(NS) if f.name == "pods")
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(
        reflector_module.list_feed(http, pods, lambda: foreground.wait_turn(3600))))
    worker.start()
    try:
        worker.join(0.5)  # window: unheld, the one page would be decoded by now
        assert worker.is_alive() and order == []
        foreground.release()
        worker.join(10)
        assert order == ["gated page"] and len(result[0][0]) == 1
    finally:
        foreground.release()
        http.close()
