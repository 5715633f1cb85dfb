"""The live source: list+watch cache over the Kubernetes API, delivering coalesced snapshots.

Threads, not asyncio: the reflectors block on urllib3 reads, which keeps them out of the
TUI's event loop entirely; :meth:`KubeSource.stop` unblocks them by shutting their sockets.
One builder thread turns cache changes into snapshots: it waits for a change, lets a burst
settle (``coalesce`` seconds), applies the feeds' pending changes to the cache (only this
thread writes the cache's content, so the builder reads it without a copy), asks the domain
builder for a new snapshot with only the changed nodes, and hands it to ``on_snapshot``.

Only the first snapshot, a namespace change and a failed build ask for a full build (seconds
of CPU at 5,000 nodes, which would starve the TUI's thread through the GIL). With no changes
it still builds every ``rebuild_every`` seconds, with an empty change set: the domain builder
rebuilds the nodes whose time thresholds have passed ("pending for 12 minutes"), nothing else.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from gputui import gctuning
from gputui.domain.cluster_id import UID_RESOURCE
from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Thresholds
from gputui.sources.base import SnapshotCallback, SourceStatus, StatusCallback
from gputui.sources.cache import ObjectCache
from gputui.sources.cluster_uid import read_cluster_uid
from gputui.sources.discovery import discover_namespace, namespace_from_policies, probe
from gputui.sources.errors import SourceError
from gputui.sources.foreground import FIRST_FEED, Foreground
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import KubeTarget
from gputui.sources.pods import read_pod_events, read_pod_log
from gputui.sources.prometheus import PrometheusOptions
from gputui.sources.reduce import wait_selectors
from gputui.sources.reflector import Backoff, FeedState, Reflector
from gputui.sources.resources import Feed, cluster_feeds, namespace_feeds, resource_of
from gputui.sources.status import StatusTracker
from gputui.domain.health_fields import HealthWindows
from gputui.sources.xids import XidTracker, metrics_gap

log = logging.getLogger(__name__)

#: seconds the collector may stay paused waiting for the first complete snapshot
GC_PAUSE_LIMIT = 120.0
#: seconds the other feeds' decoding waits for a snapshot of the whole node list at most
GATE_LIMIT = 10.0


class SnapshotBuilderLike(Protocol):
    """The domain's ``SnapshotBuilder`` as the source uses it."""

    def build(self, objects: ClusterObjects, now: float,
              changed_nodes: frozenset[str] | None = None) -> ClusterSnapshot: ...


def _ignore_snapshot(_: Any) -> None:
    return None


def _ignore_status(_: SourceStatus) -> None:
    return None


class KubeSource:
    """A :class:`~gputui.sources.base.ClusterSource` over a real (or emulated) API server.

    Args:
        target: the loaded kubeconfig context (:func:`~gputui.sources.kubeconfig.load_target`).
        thresholds: finding thresholds for the domain builder.
        namespace: operator namespace override; ``None`` discovers it.
        clock: "now" for the domain (the emulated clock in demo mode).
        on_stop: called last by :meth:`stop` (the demo stops its emulated cluster there).
        coalesce: minimum seconds between two builds. Short on purpose: a build costs what
            changed, so at 1,000 node writes/s on 5,000 nodes 0.05 s used the same builder
            CPU as 0.15 s (1.4 s per 10 s) and halved write-to-snapshot latency (median
            48 ms, p99 273 ms against 133 / 459); the app paces repaints itself.
        rebuild_every: seconds between builds when nothing changes (time thresholds).
        watch_timeout: ``timeoutSeconds`` asked of each watch (tests use a few seconds).
        builder: anything with ``build(objects, now, changed_nodes=...)``; default the
            domain's ``SnapshotBuilder(thresholds)`` (tests pass a recorder).
        prometheus: where to query XIDs (a URL or :class:`PrometheusOptions`); ``None``
            scrapes the exporters (small fleets).
        xid_every: seconds between XID reads; 0 turns them off.
        foreground: what the screen showing this source needs now (a key's answer, the
            node rows painted): the list pages wait for it. Builds do not wait for keys:
            what the screen shows must follow the cluster (a plan made right after a
            cordon reads the snapshot that shows it).
    """

    def __init__(self, target: KubeTarget, thresholds: Thresholds | None = None, *,
                 namespace: str | None = None, clock: Callable[[], float] = time.time,
                 on_stop: Callable[[], None] | None = None, coalesce: float = 0.05,
                 rebuild_every: float = 5.0, watch_timeout: int = 290,
                 backoff_cap: float = 30.0, builder: SnapshotBuilderLike | None = None,
                 prometheus: str | PrometheusOptions | None = None, xid_every: float = 30.0,
                 foreground: Foreground | None = None):
        self.target = target
        self.thresholds = thresholds or Thresholds()
        self.namespace_override = namespace
        self.namespace: str | None = namespace
        self.clock = clock
        self.coalesce = coalesce
        self.rebuild_every = rebuild_every
        self.watch_timeout = watch_timeout
        self.backoff_cap = backoff_cap
        self.cache = ObjectCache()
        self.http = KubeHttp(target.configuration)
        self.tracker = StatusTracker(target.context, target.server)
        self.http.on_retry = self._request_retrying
        self._credentials = target.credentials
        if self._credentials is not None:  # a failing credential plugin: said in the header
            self._credentials.on_status = self._credential_status
            self.http.on_unauthorized = self._credentials.unauthorized
        self.snapshot: ClusterSnapshot | None = None
        self._on_stop = on_stop
        self._on_snapshot: SnapshotCallback = _ignore_snapshot
        self._on_status: StatusCallback = _ignore_status
        self._reflectors: dict[str, Reflector] = {}
        #: waitForCompletion selectors the GPU pod feed keeps pods for
        self._wait: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._dirty = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_status: SourceStatus | None = None
        self._domain_builder = builder
        self._gc_pause = gctuning.BoundedPause()
        self._loading: frozenset[str] = frozenset()  # what the last build had not read
        #: the other feeds decode once a snapshot of every GPU node (FIRST_FEED) is out,
        #: and a screen (``foreground``) painted it: its build and the screen's first frame
        #: then have the one interpreter to themselves, and the node rows show first
        self._first_shown = threading.Event()
        self.foreground = foreground or Foreground()
        #: the first node list's pages are coming into the cache (a build can show them)
        self._nodes_arriving = threading.Event()
        lookback = 60.0 * getattr(self.thresholds, "xid_lookback_minutes", 60.0)
        self.xids = XidTracker(self.http, prometheus, lookback,
                               windows=HealthWindows.of(self.thresholds))
        #: the ``kube-system`` namespace UID, read when connecting ("" until then, or when
        #: it cannot be read: ``_uid_gap`` says why when RBAC refused it)
        self.cluster_uid = ""
        self._uid_gap: str | None = None
        self.xid_every = xid_every
        #: called on the build thread after each successful build with its input and
        #: ``now`` (``--record``); it must return quickly and not keep the mappings
        self.on_built: Callable[[ClusterObjects, float], None] | None = None

    # ---------------------------------------------------------------- protocol
    def start(self, on_snapshot: SnapshotCallback, on_status: StatusCallback) -> None:
        """Connect and begin streaming in background threads; returns at once."""
        self._on_snapshot = on_snapshot
        self._on_status = on_status
        # no cyclic GC until the first snapshot: the initial lists allocate millions of
        # long-lived dicts (no cycles), and collections over them would double the CPU of
        # the first sync at 5,000 nodes; bounded by GC_PAUSE_LIMIT, so a cluster that never
        # answers does not leave the process without a collector
        self._gc_pause.begin()
        self.foreground.when_listening(self._dirty.set)  # the builds held for the screen
        loops = [(self._connect_loop, "gputui-connect"), (self._build_loop, "gputui-builder")]
        if self.xid_every > 0:
            loops.append((self._xid_loop, "gputui-xids"))
        for target, name in loops:
            thread = threading.Thread(target=target, name=name, daemon=True)
            self._threads.append(thread)
            thread.start()
        self._report_status()

    def stop(self) -> None:
        """Stop every thread: sockets are shut so blocked reads return at once."""
        self._gc_pause.end(freeze_first=False)
        self._stop.set()
        self._dirty.set()
        self._first_shown.set()  # gated feeds stop waiting for the nodes
        self.foreground.release()  # and for the screen
        with self._lock:
            reflectors = list(self._reflectors.values())
        for reflector in reflectors:
            reflector.stop()
        self.http.close()
        if self._credentials is not None:
            self._credentials.stop()
        deadline = time.monotonic() + 2.0
        for reflector in reflectors:
            reflector.join(max(0.0, deadline - time.monotonic()))
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        if self._on_stop is not None:
            on_stop, self._on_stop = self._on_stop, None
            on_stop()

    def status(self) -> SourceStatus:
        """Connection state and data age now (for whoever asks, any thread)."""
        return self.tracker.current()

    def pod_log(self, namespace: str, pod: str, container: str | None = None,
                tail_lines: int = 200) -> list[str]:
        """Recent log lines of one container (blocking; call from a worker thread)."""
        return read_pod_log(self.http, namespace, pod, container, tail_lines)

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        """Events whose involvedObject is the pod, oldest first (blocking)."""
        return read_pod_events(self.http, namespace, pod)

    # ------------------------------------------------------------- connecting
    def _connect_loop(self) -> None:
        """Probe and discover, retrying with back-off, then start the feeds."""
        backoff = Backoff(cap=self.backoff_cap)
        while not self._stop.is_set():
            try:
                probe(self.http)
                namespace = discover_namespace(self.http, self.namespace_override)
                self.cluster_uid, self._uid_gap = read_cluster_uid(self.http)
            except Exception as error:  # noqa: BLE001 - this thread must say why, not die
                if self._stop.is_set():
                    return
                self.tracker.connecting_failed(f"{_one_sentence(error)}; retrying")
                self._report_status()
                self._stop.wait(backoff.next())
                continue
            self.tracker.connected()
            self.namespace = namespace
            self._start_feeds(cluster_feeds() + namespace_feeds(namespace, self._wait))
            self._report_status()
            return

    def _start_feeds(self, feeds: list[Feed]) -> None:
        """Register every feed as syncing first, so no snapshot is built from a part."""
        with self._lock:
            if self._stop.is_set():
                return
            for feed in feeds:
                self.tracker.feed(feed.name, FeedState.SYNCING, "")
            for feed in feeds:
                reflector = Reflector(self.http, feed, self.cache, self,
                                      watch_timeout=self.watch_timeout,
                                      backoff=Backoff(cap=self.backoff_cap),
                                      gate=self.foreground.wait_turn
                                      if resource_of(feed.name) == FIRST_FEED
                                      else self._after_first_rows,
                                      on_first_pages=self._node_page_in
                                      if feed.name == FIRST_FEED else None)
                self._reflectors[feed.name] = reflector
                reflector.start()

    def _set_namespace(self, namespace: str) -> None:
        """Restart the namespace-dependent feeds when the namespace is found or moves.

        The new feeds are marked syncing before the old ones go, so the builder waits for
        them instead of publishing a snapshot without operand pods.
        """
        if namespace == self.namespace:
            return
        feeds = namespace_feeds(namespace, self._wait)
        self._restart(feeds)
        self.namespace = namespace

    def _restart(self, feeds: list[Feed]) -> None:
        """Replace the running feeds of the same names with ``feeds`` (marked syncing first,
        so the builder waits for them instead of publishing a snapshot without their part)."""
        for feed in feeds:
            self.tracker.feed(feed.name, FeedState.SYNCING, "")
        for feed in feeds:
            with self._lock:
                reflector = self._reflectors.pop(feed.name, None)
            if reflector is not None:
                reflector.stop()
                self.cache.clear(feed.name)
        self.cache.mark_full()
        self._start_feeds(feeds)

    def _follow_wait_selectors(self) -> bool:
        """Restart the GPU pod feed when the ``waitForCompletion`` selectors change, so it
        keeps the pods they select; True when it restarted."""
        wait = wait_selectors(self.cache.slot("clusterpolicies"), self.cache.slot("nvidiadrivers"))
        if wait == self._wait or "gpu-pods" not in self._reflectors:
            return False
        self._wait = wait
        self._restart([f for f in namespace_feeds(self.namespace, wait) if f.name == "gpu-pods"])
        return True

    def _follow_policy_namespace(self) -> bool:
        """Without an override, follow the ClusterPolicy's ``status.namespace``; True when
        the namespace moved (its feeds restart)."""
        if self.namespace_override or "clusterpolicies" not in self._reflectors:
            return False
        found = namespace_from_policies(self.cache.slot("clusterpolicies"))
        if found and found != self.namespace:
            self._set_namespace(found)
            return True
        return False

    # -------------------------------------------------------- FeedListener
    def feed_state(self, feed: str, state: FeedState, message: str) -> None:
        was_settled = self.tracker.settled
        self.tracker.feed(feed, state, message)
        if feed == FIRST_FEED and state not in (FeedState.SYNCING, FeedState.SYNCED):
            self._no_rows_to_wait_for()  # forbidden, absent or failing
        if state is not FeedState.DISCONNECTED:
            self.tracker.touch()
        if self.tracker.settled and not was_settled:
            self._dirty.set()  # changes that came while a feed was away can be built now
        self._report_status()

    def feed_changed(self) -> None:
        self.tracker.touch()
        self._dirty.set()

    def _no_rows_to_wait_for(self) -> None:
        self._first_shown.set()
        self.foreground.skip_shown()

    def _after_first_rows(self) -> None:
        """(the other feeds' threads, before decoding each page) Wait for the node rows:
        built from the whole node list and painted, each wait bounded (one that ran out
        is not waited again), then for a key's claim to end."""
        if not self._first_shown.wait(GATE_LIMIT):
            self._no_rows_to_wait_for()
        self.foreground.wait_nodes_shown()
        self.foreground.wait_turn()

    def _node_page_in(self) -> None:
        """(nodes feed) A page of the first node list is in the cache: rows can show
        before the rest of the list arrives, marked loading."""
        self._nodes_arriving.set()
        self.feed_changed()

    def feed_alive(self) -> None:
        """A bookmark: the data is current (status age), but a build would find nothing new
        and would cost the UI a snapshot to compare, once a second per feed."""
        self.tracker.touch()

    def _xid_loop(self) -> None:
        """Read XIDs once the first snapshot is out, then every ``xid_every`` seconds."""
        while self.snapshot is None or self.snapshot.loading:  # exporters come with pods
            if self._stop.wait(0.2):
                return
        while not self._stop.is_set():
            objects = self.cache.objects(operator_namespace=self.namespace)
            if self.xids.refresh(objects, self.clock()):
                self._dirty.set()
            if self._stop.wait(self.xid_every):
                return

    # --------------------------------------------------------------- building
    def _build_loop(self) -> None:
        last_build = 0.0
        while not self._stop.is_set():
            self._dirty.wait(self.rebuild_every)
            if self._stop.is_set():
                return
            if not (self.tracker.listed(FIRST_FEED) or self._nodes_arriving.is_set()):
                self._dirty.clear()
                self._gc_pause.end_if_longer_than(GC_PAUSE_LIMIT)
                continue
            pause = self.coalesce - (time.monotonic() - last_build)
            if pause > 0 and self._stop.wait(pause):
                return
            self._dirty.clear()
            # what is still loading is read before the cache takes the feeds' changes: a
            # feed reports "listed" only after submitting its list, so nothing counted as
            # known here can be missing from the cache
            loading = self.tracker.loading()
            self.cache.apply_pending()
            if FIRST_FEED in loading and self.foreground.building_for_nobody():
                continue  # part of the node list, and no screen yet: it asks when it is up
            if self._follow_policy_namespace() or self._follow_wait_selectors():
                continue  # restarted feeds are syncing: build once they are in
            nodes_listed_now = FIRST_FEED in self._loading and FIRST_FEED not in loading
            if loading and self.snapshot is not None and self.snapshot.loading and (
                    not self.cache.node_objects_changed()) and not nodes_listed_now:
                # a half-loaded screen shows the nodes only: a DaemonSet, policy or MIG
                # ConfigMap list arriving changes nothing it shows (4,000 per-node MIG
                # ConfigMaps would rebuild 4,000 nodes), and a rebuild of 15,000 nodes
                # would only slow the pod lists still being decoded; what they changed is
                # kept for the build that follows. But the build that first has the whole
                # node list opens the other lists' decoding (``_first_shown``)
                continue
            if self.snapshot is None or (self._loading and not loading):
                # the first build, and the first with every list in (the domain compares
                # the cluster-wide inputs that arrive in between itself)
                self.cache.mark_full()
            self._loading = loading
            last_build = time.monotonic()
            self._build_and_deliver(loading)
            if FIRST_FEED not in loading:  # this build had every node row: the other lists
                self._first_shown.set()    # decode once it is painted (see __init__)

    def _build_and_deliver(self, loading: frozenset[str]) -> None:
        """One build from the cache's live content (this thread is its only writer).

        Builds start once the GPU nodes are listed, before the (much bigger) pod lists:
        the snapshot says what is still ``loading`` and the domain leaves pipelines and
        findings unknown until then, so the operator sees the nodes seconds earlier.
        """
        changes = self.cache.take_changes()
        objects = self.cache.build_inputs(
            operator_namespace=self.namespace, context=self.target.context,
            server=self.target.server, forbidden=frozenset(self.tracker.forbidden()),
            xids=self.xids.current, gpu_health=self.xids.health, loading=loading,
            unreadable=self._unreadable(), cluster_uid=self.cluster_uid)
        now = self.clock()
        try:
            # a build allocates ~10^6 acyclic objects at 5,000 nodes: collections over them
            # measured a third to a half of the build (gctuning's rule)
            with gctuning.paused():
                snapshot = self._builder().build(objects, now, changed_nodes=changes)
        except Exception as error:  # any domain bug: keep the last snapshot, say so in the
            # header (stale since now), and try a full build next time
            log.exception("snapshot build failed")
            self.cache.mark_full()
            text = str(error).splitlines()[0] if str(error) else ""
            self.tracker.build_failed(f"{type(error).__name__}: {text}".rstrip(": "))
            self._report_status()
            return
        self.tracker.build_succeeded()
        self.snapshot = snapshot
        if not loading:  # the collector stays paused while the big lists are decoded, then
            # what is cached now is frozen first: later passes need not walk it again
            self._gc_pause.end(freeze_first=True)
        else:  # but not for ever when a list never arrives
            self._gc_pause.end_if_longer_than(GC_PAUSE_LIMIT)
        self._deliver(snapshot)
        if self.on_built is not None:  # after delivery: the screen does not wait for it,
            # and before the next apply_pending, which changes what ``objects`` shares
            try:
                self.on_built(objects, now)
            except Exception:  # broad: a recorder's bug must not end the builder thread
                log.exception("on_built callback failed")

    def _unreadable(self) -> dict[str, str]:
        """What the feeds could not read, plus the metrics when scrapes or queries failed."""
        found = self.tracker.unreadable()
        gap = metrics_gap(self.xids.forbidden, self.xids.unread)
        if gap:
            found["metrics"] = gap
        if self._uid_gap is not None:
            found[UID_RESOURCE] = self._uid_gap
        return found

    def _builder(self) -> SnapshotBuilderLike:
        """One domain builder for the source's life: it keeps per-node work between builds."""
        if self._domain_builder is None:
            from gputui.domain.snapshot import SnapshotBuilder

            self._domain_builder = SnapshotBuilder(self.thresholds)
        return self._domain_builder

    def _deliver(self, snapshot: ClusterSnapshot) -> None:
        try:
            self._on_snapshot(snapshot)
        except Exception:  # broad: the caller's bug must not end the builder thread
            log.exception("on_snapshot callback failed")
        self._report_status(force=True)

    def _credential_status(self, message: str | None) -> None:
        """The credential plugin failed (``message``) or works again (None)."""
        if self.tracker.credential(message):
            self._report_status()

    def _request_retrying(self, thread: int, message: str | None) -> None:
        """The HTTP layer is retrying a request (or has stopped): say so at once."""
        if self.tracker.retrying(thread, message):
            self._report_status()

    def _report_status(self, force: bool = False) -> None:
        current = self.tracker.current()
        if not force and current == self._last_status:
            return
        self._last_status = current
        try:
            self._on_status(current)
        except Exception:  # broad: the caller's bug must not end the source's threads
            log.exception("on_status callback failed")


def _one_sentence(error: Exception) -> str:
    """A source error as it is; anything else (a bug, a library's surprise) as its type and
    first line, scrubbed of credentials, and logged with its traceback for the report."""
    if isinstance(error, SourceError):
        return str(error)
    from gputui.sources.secrets import scrub

    log.exception("connecting failed unexpectedly")
    first = (scrub(str(error)).splitlines() or [""])[0]
    return f"cannot connect: {type(error).__name__}" + (f": {first}" if first else "")
