"""Read every feed once, no watches: what ``gputui check`` needs, as fast as the server allows.

The feeds are listed concurrently (nodes and pods at once), each page decoded straight into
its reduced form (:mod:`gputui.sources.decode`) while the next page is on its way, into the
same :class:`ObjectCache` the live source uses, so ``check`` and the TUI see the cluster
through exactly the same reduction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from gputui import gctuning
from gputui.domain.cluster_id import UID_RESOURCE
from gputui.domain.inputs import ClusterObjects
from gputui.domain.readgaps import FORBIDDEN, NOT_SERVED, REFUSED
from gputui.sources.cache import ObjectCache
from gputui.sources.cluster_uid import read_cluster_uid
from gputui.sources.discovery import discover_namespace, probe, served
from gputui.sources.errors import ApiStatusError
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import KubeTarget
from gputui.sources.reduce import wait_selectors
from gputui.sources.reflector import list_feed
from gputui.sources.resources import (
    Feed,
    cluster_feeds,
    namespace_feeds,
    resource_of,
    unreadable_resources,
)

#: lists read at once: the two big ones (operand pods, nodes) plus the small ones beside
LIST_THREADS = 3


def _heaviest_first(feed: Feed) -> int:
    """Start the biggest lists first so the small ones fill the gaps."""
    return {"pods": 0, "nodes": 1, "gpu-pods": 2}.get(feed.name, 3)


#: feeds read before the others: their wait selectors shape the pod feeds
_POLICY_FEEDS = frozenset({"clusterpolicies", "nvidiadrivers"})


def _read_feed(http: KubeHttp, feed: Feed, cache: ObjectCache) -> tuple[str, str] | None:
    """List one feed into the cache; returns (feed name, reason) when it cannot be read:
    ``forbidden`` for a 403, ``not-served`` for a 404 on an optional feed (a CRD that is
    not installed), ``refused`` when an object of it could not be read (nested too deep:
    the others are kept). Any other error ends the read (``check`` exits 2)."""
    refused: list[str] = []
    try:
        items, _ = list_feed(http, feed, refused=refused)
    except ApiStatusError as error:
        if error.code == 403 and feed.optional and served(http, feed.path) is False:
            return feed.name, NOT_SERVED  # RBAC answers before routing: no such CRD here
        if error.code == 403:
            return feed.name, FORBIDDEN
        if error.code == 404 and feed.optional:
            return feed.name, NOT_SERVED
        raise
    cache.replace(feed.name, items)
    return (feed.name, REFUSED) if refused else None


def read_objects(target: KubeTarget, namespace: str | None = None,
                 http: KubeHttp | None = None) -> ClusterObjects:
    """Connect, discover the operator namespace and list every feed once.

    Args:
        target: the loaded kubeconfig context.
        namespace: operator namespace override (``Settings.namespace``).
        http: an open client to reuse (tests); one is made and closed otherwise.

    Raises:
        SourceError: one line when the server is unreachable or rejects the request.
    """
    own = http is None
    client = http or KubeHttp(target.configuration)
    try:
        probe(client)
        found = discover_namespace(client, namespace)
        uid, uid_gap = read_cluster_uid(client)
        cache = ObjectCache()
        # the policies first (two small lists): they name the pods the upgrade controller
        # waits for, which the pod feeds must keep too
        policies = [feed for feed in cluster_feeds() if feed.name in _POLICY_FEEDS]
        # no cyclic collection while lists are decoded: decoding allocates millions of dicts
        # that all stay alive (they are the cache), so every pass is wasted work that grows
        # with the heap (at 40,000 pods it more than doubled the CPU time of a read; JSON
        # has no cycles). What was read is frozen before the collector resumes: the domain
        # build and the report that follow allocate enough to trigger full collections, and
        # each would walk the whole cache again (at 5,000 nodes over a second of ``check``).
        with gctuning.paused(freeze_after=True):
            results = [_read_feed(client, feed, cache) for feed in policies]
            cache.apply_pending()
            wait = wait_selectors(cache.slot("clusterpolicies"), cache.slot("nvidiadrivers"))
            # then the rest concurrently: decoding holds the GIL, but while one feed decodes
            # a page the others' pages are in flight (operand pods, the biggest, set the pace)
            feeds = sorted([feed for feed in cluster_feeds() if feed.name not in _POLICY_FEEDS]
                           + namespace_feeds(found, wait), key=_heaviest_first)
            with ThreadPoolExecutor(LIST_THREADS, "gputui-list") as pool:
                results += pool.map(lambda feed: _read_feed(client, feed, cache), feeds)
            cache.apply_pending()  # this thread is the cache's only reader: no copy needed
        unreadable = unreadable_resources(result for result in results if result)
        if uid_gap is not None:
            unreadable = {**unreadable, UID_RESOURCE: uid_gap}
        forbidden = {resource_of(name) for name, reason in (r for r in results if r)
                     if reason == FORBIDDEN}
        return cache.build_inputs(operator_namespace=found, context=target.context,
                                  server=target.server, forbidden=frozenset(forbidden),
                                  unreadable=unreadable, cluster_uid=uid)
    finally:
        if own:
            client.close()
