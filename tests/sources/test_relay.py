"""A source started before the app listens (``Session.start_early``) hands over what it said.

Why it matters: ``gputui`` starts its source before importing the UI so the first lists
transfer meanwhile; nothing it said in that time may be lost or arrive out of order.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.relay import Relay
from tests.sources.helpers import seed_small_cluster, wait_for


def test_until_attached_only_the_newest_is_kept_then_everything_passes() -> None:
    relay = Relay()
    relay.status("connecting")
    relay.snapshot("first")
    relay.status("live")
    relay.snapshot("second")
    heard: list[tuple[str, Any]] = []
    relay.attach(lambda s: heard.append(("snapshot", s)), lambda s: heard.append(("status", s)))
    assert heard == [("status", "live"), ("snapshot", "second")]
    relay.snapshot("third")
    relay.status("stale")
    assert heard[2:] == [("snapshot", "third"), ("status", "stale")]


def test_nothing_said_before_attach_is_handed_over_twice() -> None:
    relay = Relay()
    heard: list[Any] = []
    relay.attach(heard.append, heard.append)
    relay.attach(heard.append, heard.append)  # a second listener gets nothing stale
    assert heard == []


def test_a_snapshot_sent_while_attaching_is_not_overtaken_by_the_kept_one() -> None:
    """The source's thread delivers during attach: the kept (older) snapshot comes first."""
    relay = Relay()
    relay.snapshot(1)
    heard: list[int] = []
    entered = threading.Event()

    def slow_listener(value: int) -> None:
        entered.set()
        heard.append(value)
        threading.Event().wait(0.05)  # the source's thread tries to deliver meanwhile

    sender = threading.Thread(target=lambda: (entered.wait(5), relay.snapshot(2)))
    sender.start()
    relay.attach(slow_listener, lambda _: None)
    sender.join(5)
    assert heard == [1, 2]


def test_a_session_started_early_hands_its_first_snapshot_to_the_app(
        cluster: EmulatedCluster, tmp_path: Path) -> None:
    seed_small_cluster(cluster)
    settings = Settings(kubeconfig=str(cluster.write_kubeconfig(tmp_path / "kubeconfig")))
    session = session_of(settings, open_source(settings))
    try:
        session.start_early()
        wait_for(lambda: getattr(session.source, "snapshot", None) is not None,
                 what="a snapshot built before anyone listens")
        snapshots: list[Any] = []
        statuses: list[Any] = []
        session.start(snapshots.append, statuses.append, lambda _: None)
        assert snapshots and sorted(snapshots[0].nodes) == ["gpu-0", "gpu-1", "gpu-2"]
        assert statuses  # the header learns the connection state at once
    finally:
        session.stop()
