#!/usr/bin/env python3
"""Soak: does a feed under pod churn keep its place through real-shaped bookmarks?

What it reproduces (issue 18, 10a): the real API server's Pod bookmark is the zero Pod
(``"spec": {"containers": null}``). A client that drops it for its shape keeps the
resourceVersion of the last event *it* saw; on a busy cluster the server's event history
moves past that version while the watch is quiet, so the next reconnect gets 410 and relists
the whole collection, once per watch cycle.

Steps:
1. An emulated API server (no controllers) with a short event history (``--history``
   events per resource), bookmarks every ``--bookmarks`` seconds, shaped as the real server's.
2. gputui's reflector follows the operator namespace's pods (the typed Pod decoder) with a
   watch timeout of ``--watch-timeout`` seconds, so it reconnects again and again.
3. Meanwhile pods in another namespace are created and deleted (``--churn`` a second): the
   watched namespace sees none of it, the history overflows many times over.
4. It prints, from the server's request log: lists of the watched pods (1 is the first list;
   more are relists), watches opened, all requests, and the bookmarks the feed read.

``python benchmarks/soak_bookmarks.py --minutes 10`` (the suite runs a 12 s version).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from gputui.sim import apiserver
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.store import Store
from gputui.sources.cache import ObjectCache
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.reflector import FeedState, Reflector
from gputui.sources.resources import namespace_feeds

WATCHED = "gpu-operator"
CHURNED = "ml"


@dataclass
class SoakResult:
    """What the server saw and what the feed read."""

    seconds: float
    lists: int  # GET of the watched collection without watch=true (1 = the first list)
    watches: int
    requests: int
    bookmarks: int
    churned: int  # pod writes in the other namespace
    states: list[str]

    @property
    def relists(self) -> int:
        return max(0, self.lists - 1)


class _Listener:
    def __init__(self) -> None:
        self.bookmarks = 0
        self.states: list[str] = []

    def feed_state(self, feed: str, state: FeedState, message: str) -> None:
        if not self.states or self.states[-1] != state.value:
            self.states.append(state.value)

    def feed_changed(self) -> None:
        return None

    def feed_alive(self) -> None:
        self.bookmarks += 1


@contextlib.contextmanager
def _recording(seen: list[str]) -> Iterator[None]:
    """Every request the emulated server receives (path and query), while inside."""
    original = apiserver.build_app

    def build_app(*args: Any, **kwargs: Any) -> web.Application:
        app = original(*args, **kwargs)

        @web.middleware
        async def record(request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                         ) -> web.StreamResponse:
            seen.append(request.path_qs)
            return await handler(request)

        app.middlewares.insert(0, record)
        return app

    apiserver.build_app = build_app  # type: ignore[assignment]
    try:
        yield
    finally:
        apiserver.build_app = original  # type: ignore[assignment]


def _pod(namespace: str, name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "labels": {"app": "churn"}},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "main", "image": "x"}]},
            "status": {"phase": "Running"}}


def _churn(store: Store, per_second: float, stop: threading.Event) -> Callable[[], int]:
    """Create and delete pods in :data:`CHURNED` until ``stop``; returns a write counter."""
    count = [0]

    def run() -> None:
        index = 0
        while not stop.wait(1.0 / per_second):
            name = f"job-{index}"
            store.create("pods", _pod(CHURNED, name))
            if index >= 5:
                store.delete("pods", f"job-{index - 5}", CHURNED)
            index += 1
            count[0] += 2

    threading.Thread(target=run, name="churn", daemon=True).start()
    return lambda: count[0]


def soak(seconds: float, *, history: int = 40, bookmarks: float = 0.25,
         watch_timeout: int = 2, churn: float = 40.0) -> SoakResult:
    """Run the reflector for ``seconds`` under churn; count what the server saw."""
    seen: list[str] = []
    cluster = EmulatedCluster(run_controllers=False, bookmark_interval=bookmarks)
    cluster.store = Store(cluster.clock, event_log_size=history)
    cluster.store.create("pods", _pod(WATCHED, "nvidia-driver-daemonset-0"))
    stop = threading.Event()
    with _recording(seen):
        cluster.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = load_target(str(cluster.write_kubeconfig(Path(tmp) / "kubeconfig")),
                                 None).configuration
        http = KubeHttp(config)
        feed = next(f for f in namespace_feeds(WATCHED) if f.name == "pods")
        listener = _Listener()
        reflector = Reflector(http, feed, ObjectCache(), listener, watch_timeout=watch_timeout)
        churned = _churn(cluster.store, churn, stop)
        reflector.start()
        time.sleep(seconds)
        stop.set()
        reflector.stop()
        reflector.join(5)
        http.close()
    finally:
        stop.set()
        cluster.stop()
    path = feed.path
    mine = [p for p in seen if p.split("?")[0] == path]
    return SoakResult(seconds, sum(1 for p in mine if "watch=true" not in p),
                      sum(1 for p in mine if "watch=true" in p), len(seen),
                      listener.bookmarks, churned(), listener.states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--history", type=int, default=40)
    parser.add_argument("--bookmarks", type=float, default=0.25)
    parser.add_argument("--watch-timeout", type=int, default=2)
    parser.add_argument("--churn", type=float, default=40.0)
    args = parser.parse_args()
    result = soak(args.minutes * 60, history=args.history, bookmarks=args.bookmarks,
                  watch_timeout=args.watch_timeout, churn=args.churn)
    print(f"{result.seconds:.0f} s, {result.churned} pod writes in {CHURNED!r} "
          f"(history {args.history} events)")
    print(f"relists: {result.relists}   lists: {result.lists}   watches: {result.watches}   "
          f"requests: {result.requests}   bookmarks read: {result.bookmarks}")


if __name__ == "__main__":
    main()
