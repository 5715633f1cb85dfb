"""A drain when the API server misbehaves: resumes after a fault, stops cleanly and says why.

Evictions are safe to send again (an eviction that landed makes the pod go; evicting a pod
that is gone answers 404), so a drain retries them through a server that fails for a while,
and stops at its timeout naming each pod left when the refusal never ends.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gputui.actions.base import Progress
from gputui.actions.registry import action
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import driver_daemonset, gpu_node, gpu_pod, snapshot_of
from tests.actions.helpers import runner_for


def _seed(cluster: EmulatedCluster) -> None:
    driver_daemonset(cluster.store)
    cluster.store.create("nodes", gpu_node("gpu-1"))
    cluster.store.create("pods", gpu_pod("train-0", "gpu-1"))
    cluster.store.create("pods", gpu_pod("train-1", "gpu-1"))


def _drain(server: EmulatedCluster, writer: KubeWriter, tmp_path: Path, fault: str,
           timeout: float) -> tuple[object, list[Progress]]:
    runner = runner_for(writer, tmp_path)
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["gpu-1"],
                       {"timeout": timeout})
    dry = runner.dry_run(plan)
    assert dry.ok
    server.inject(fault)
    seen: list[Progress] = []
    return runner.apply(action("drain"), plan, dry, seen.append, threading.Event()), seen


@pytest.mark.parametrize("fault", ["503:0~/eviction+2s", "500~/eviction+2s", "down~/eviction+2s"])
def test_a_drain_resumes_when_the_fault_ends(server: EmulatedCluster, writer: KubeWriter,
                                             tmp_path: Path, fault: str) -> None:
    _seed(server)
    result, seen = _drain(server, writer, tmp_path, fault, timeout=30)
    assert result.ok, result  # type: ignore[attr-defined]
    assert result.summary.startswith("drained gpu-1: 2 pods evicted and gone")  # type: ignore[attr-defined]
    assert any(p.blocked for p in seen)  # the operator saw why it waited
    assert server.injector.injected[fault.split(":")[0].split("~")[0]] > 0
    assert server.store.get("pods", "train-0", "ml") is None


def test_an_eviction_refused_forever_stops_at_the_timeout(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    # 5 s: time for a first eviction to be sent and refused even on a loaded machine
    result, _ = _drain(server, writer, tmp_path, "evict-refuse", timeout=5)
    assert not result.ok and not result.cancelled  # type: ignore[attr-defined]
    assert result.summary.startswith(  # type: ignore[attr-defined]
        "gpu-1 not drained: 2 pods still there after 5 s")
    assert "disruption budget" in result.error  # type: ignore[attr-defined]
    assert server.store.get("pods", "train-0", "ml") is not None  # never deleted instead
    assert server.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
