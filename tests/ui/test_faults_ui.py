"""The app on the live source while the emulated API server misbehaves (Pilot, real HTTP).

Under a fault the keys keep working, the header says what is wrong and since when, and when
the fault ends the header is live again and the node list is the server's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.base import Connection, SourceStatus
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from gputui.sources.retry import RetryPolicy
from gputui.ui.app import make_app
from gputui.ui.widgets.status_header import HeaderState, render_header
from tests.sources.helpers import cluster_policy, node
from tests.ui.helpers import until

NS = "gpu-operator"


@pytest.fixture
def seeded(api_only: EmulatedCluster, tmp_path: Path) -> Iterator[tuple[EmulatedCluster, Path]]:
    for i in range(3):
        api_only.store.create("nodes", node(f"gpu-{i}"))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    yield api_only, api_only.write_kubeconfig(tmp_path / "kubeconfig")


def header_line(app: Any) -> str:
    return str(app.screen.query_one("StatusHeader").render()).splitlines()[0]


@pytest.mark.parametrize("fault", ["down", "500", "forbid:nodes"])
async def test_keys_work_and_the_header_tells_during_a_fault(
        seeded: tuple[EmulatedCluster, Path], fault: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gputui.sources import reflector

    monkeypatch.setattr(reflector.Reflector, "RECHECK_SECONDS", 1.0)
    cluster, kubeconfig = seeded
    source = KubeSource(load_target(str(kubeconfig)), watch_timeout=3, backoff_cap=0.5,
                        xid_every=0)
    # client-go's 11 attempts, backing off to 0.5 s instead of 8 s: the relist under "500"
    # gives up after ~5 s instead of ~45 (the schedule itself: tests/sources/test_retry.py)
    source.http.policy = RetryPolicy(cap=0.5)
    app = make_app(Settings(), session_of(Settings(), source))
    app.min_snapshot_interval = 0.0
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.snapshot.nodes) == 3 and "live" in header_line(app),
                    why=lambda: header_line(app))
        cluster.inject(fault)
        if fault == "500":  # retried quietly at first; a relist while it lasts gives up
            cluster.inject("watch-close")
        told = {"down": "stale since", "500": "stale since", "forbid:nodes": "forbidden"}[fault]
        await until(pilot, lambda: told in header_line(app) or told in app.status.message,
                    why=lambda: header_line(app))
        await pilot.press("2")
        await until(pilot, lambda: app.current_mode == "upgrades")
        await pilot.press("1")
        await until(pilot, lambda: app.current_mode == "nodes")
        cluster.store.create("nodes", node("gpu-late"))
        cluster.heal()
        await until(pilot, lambda: "gpu-late" in app.snapshot.nodes
                    and "live" in header_line(app), why=lambda: header_line(app))
        assert sorted(app.snapshot.nodes) == ["gpu-0", "gpu-1", "gpu-2", "gpu-late"]


def test_a_failed_build_reads_as_stale_in_the_header() -> None:
    status = SourceStatus(Connection.LIVE, context="prod", last_update=1000.0,
                          stale_since=1000.0, message="snapshot build failed: KeyError: 'x'")
    text = render_header(HeaderState(status=status, now=1090.0), 120).plain
    assert "stale since" in text and "(1 min" in text and "snapshot build failed" in text
    assert "live" not in text.splitlines()[0]
