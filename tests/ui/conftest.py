"""Frozen apps for UI tests: recorded scenarios, a replay source and a fixed clock.

Everything a UI test sees is deterministic: the snapshot comes from
``tests/fixtures/scenarios/<scenario>.json`` built at the recorded ``now``, the app's clock
returns that same ``now``, and local time is UTC so clock times print the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from gputui.session import session_of
from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.domain.snapshot import SnapshotBuilder
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.nodes import SELECT_DEBOUNCE
from tests.actions.conftest import gpu_node
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import Recording, ReplaySource, load_recording


@pytest.fixture(autouse=True)
def _utc_clock(utc: None) -> None:
    """Clock times (``stale since 14:02:11``) print in UTC during UI tests."""


FrozenApp = Callable[..., GpuTuiApp]


@pytest.fixture
def frozen_app() -> FrozenApp:
    """``frozen_app("driver-crashloop", settings=...)`` -> an app on that recording."""

    def build(scenario: str = "driver-crashloop", settings: Settings | None = None,
              source: ReplaySource | None = None) -> GpuTuiApp:
        recording = load_recording(scenario, SCENARIOS)
        source = source or ReplaySource.from_recording(recording)
        app = make_app(settings or Settings(), session_of(settings or Settings(), source, clock=lambda: recording.now))
        app.min_snapshot_interval = 0.0  # apply each pushed snapshot at once
        return app
    return build


def modified(recording: Recording, *, remove: tuple[str, ...] = (), add: dict[str, str] | None = None,
             cordon: tuple[str, ...] = ()) -> ClusterSnapshot:
    """The recording's snapshot with nodes removed, copied under new names, or cordoned."""
    nodes: dict[str, Any] = {k: v for k, v in recording.objects.nodes.items() if k not in remove}
    for new, template in (add or {}).items():
        copy = dict(recording.objects.nodes[template])
        copy["metadata"] = {**copy["metadata"], "name": new,
                            "labels": {**copy["metadata"].get("labels", {}),
                                       "kubernetes.io/hostname": new}}
        nodes[new] = copy
    for name in cordon:
        nodes[name] = {**nodes[name], "spec": {**nodes[name].get("spec", {}),
                                               "unschedulable": True}}
    objects: ClusterObjects = replace(recording.objects, nodes=nodes)
    return SnapshotBuilder().build(objects, recording.now)


async def settle(pilot: Any, rounds: int = 3) -> None:
    """Let queued messages (snapshots, selections, timers) run.

    The timed pause is a window, not a guess: the node screen shows the cursor's node
    ``SELECT_DEBOUNCE`` after the cursor last moved, on a timer of this same event loop, so
    the timer is due, and runs, before a longer pause ends; the last pause lets what it
    posted be handled."""
    for _ in range(rounds):
        await pilot.pause()
    await pilot.pause(SELECT_DEBOUNCE * 1.5)  # window: the node-selection debounce fires
    await pilot.pause()


@pytest.fixture
def one_node_cluster(request_log: list[tuple[str, str]]) -> Iterator[EmulatedCluster]:
    """An emulated API server holding one GPU node ``gpu-1`` and no controllers (nothing
    changes but what the test's actions send), its requests in ``request_log``."""
    made = EmulatedCluster(run_controllers=False).start()
    made.store.create("nodes", gpu_node("gpu-1"))
    try:
        yield made
    finally:
        made.stop()
