"""A feed refused with 403 is asked again in minutes, not seconds (RBAC rarely changes)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.cache import ObjectCache
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.reflector import FeedState, Reflector
from gputui.sources.resources import cluster_feeds
from gputui.sources.retry import FORBIDDEN_RETRY


class Listener:
    def __init__(self) -> None:
        self.states: list[FeedState] = []
        self.forbidden = threading.Event()

    def feed_state(self, feed: str, state: FeedState, message: str) -> None:
        self.states.append(state)
        if state is FeedState.FORBIDDEN:
            self.forbidden.set()

    def feed_changed(self) -> None:
        return None

    def feed_alive(self) -> None:
        return None


def test_a_forbidden_feed_waits_minutes_before_asking_again(
        request_log: list[tuple[str, str]], tmp_path: Path) -> None:
    cluster = EmulatedCluster(run_controllers=False, deny="list:events").start()
    http = KubeHttp(load_target(str(cluster.write_kubeconfig(tmp_path / "kc"))).configuration)
    feed = next(f for f in cluster_feeds() if f.name == "events")
    listener = Listener()
    reflector = Reflector(http, feed, ObjectCache(), listener)
    try:
        reflector.start()
        assert listener.forbidden.wait(15)
        time.sleep(3.0)  # the old loop asked again every few seconds at most
    finally:
        reflector.stop()
        http.close()
        reflector.join(5)
        cluster.stop()
    assert FORBIDDEN_RETRY >= 300 and Reflector.RECHECK_SECONDS == FORBIDDEN_RETRY
    assert sum(1 for _, path in request_log if path == "/api/v1/events") == 1
    assert listener.states.count(FeedState.FORBIDDEN) == 1  # said once
