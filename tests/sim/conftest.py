"""Fixtures for the emulated GPU Operator: clusters at high clock speed and API clients.

Tests talk to the cluster the way gputui does, through the ``kubernetes`` client over HTTP;
they use the store's watch only to record the order of changes, never to act.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client, config

from gputui.sim.cluster import EmulatedCluster


@dataclass
class Sim:
    """A running emulated cluster and clients bound to it."""

    cluster: EmulatedCluster
    core: client.CoreV1Api
    apps: client.AppsV1Api
    custom: client.CustomObjectsApi

    @property
    def operator(self) -> Any:
        return self.cluster.operator

    def node(self, ref: str) -> str:
        """Node name for ``POOL/INDEX``."""
        pool, _, idx = ref.partition("/")
        return str(self.operator.world.pool_members[pool][int(idx)])

    def resume(self) -> None:
        """Let the emulated time run (a cluster started with ``paused=True``)."""
        self.cluster.clock.pause_at(None)

    def emulated(self) -> float:
        """Emulated seconds since the scenario started."""
        return float(self.cluster.clock.now() - self.operator.timeline.start)

    def wait_for(self, predicate: Callable[[], Any], emulated: float, what: str) -> Any:
        """Poll ``predicate`` until truthy or ``emulated`` emulated seconds have passed."""
        deadline = self.emulated() + emulated
        # only against a hang: the emulated clock waits for its controllers, so on a loaded
        # machine the emulated seconds take longer in real time, never fewer steps
        guard = time.monotonic() + 300
        while True:
            value = predicate()
            if value:
                return value
            if self.emulated() > deadline:
                pytest.fail(f"not reached within {emulated:.0f} emulated seconds: {what}")
            if time.monotonic() > guard:
                pytest.fail(f"not reached in 300 s of real time ({self.emulated():.0f} "
                            f"emulated seconds since start): {what}")
            time.sleep(0.05)


@pytest.fixture
def start_sim() -> Iterator[Callable[..., Sim]]:
    """Start an emulated cluster for a scenario (name or YAML path) at a given speed."""
    started: list[EmulatedCluster] = []

    def start(scenario: str, speed: float = 100.0, paused: bool = False, **kwargs: Any) -> Sim:
        """``paused``: the emulated time stays at the start until :meth:`Sim.resume`, so a
        test can watch the cluster before anything happens (at 300x two emulated minutes
        are 0.4 s, less than a loaded machine takes to build a client)."""
        cluster = EmulatedCluster(scenario, speed=speed, **kwargs)
        if paused:
            cluster.clock.pause_at(cluster.clock.now())
        cluster.start()
        started.append(cluster)
        cfg = client.Configuration()
        config.load_kube_config_from_dict(cluster.kubeconfig(), client_configuration=cfg)
        api = client.ApiClient(cfg)
        return Sim(cluster, client.CoreV1Api(api), client.AppsV1Api(api),
                   client.CustomObjectsApi(api))

    yield start
    for cluster in started:
        cluster.stop()
