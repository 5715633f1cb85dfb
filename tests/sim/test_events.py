"""Events as upstream records them, and as a real API server keeps them (for an hour).

Upstream: k8s-operator-libs ``pkg/upgrade`` (``node_upgrade_state_provider.go``,
``drain_manager.go``, ``pod_manager.go``, ``validation_manager.go``, ``util.go``
``GetEventReason``); kube-apiserver ``--event-ttl`` (default 1h).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from gputui.sim import eventttl
from gputui.sim.clock import SimClock
from gputui.sim.operator import upgrade_messages as M
from gputui.sim.operator.objects import node_event
from gputui.sim.store import Store

#: Every logEvent/logEventf call in k8s-operator-libs pkg/upgrade (message, type), read there.
UPSTREAM_CALLS = {
    ("Successfully updated node state label to %s", "Normal"),
    ("Failed to update node state label to %s, %s", "Warning"),
    ("Successfully updated node annotation to %s=%s", "Normal"),
    ("Failed to update node annotation to %s=%s: %s", "Warning"),
    ("Scheduling drain of the node", "Normal"),
    ("Successfully drained the node", "Normal"),
    ("Failed to cordon the node, %s", "Warning"),
    ("Failed to drain the node, %s", "Warning"),
    ("Deleted workload pods on the node for the driver upgrade", "Normal"),
    ("Failed to delete workload pods on the node for the driver upgrade, %s", "Warning"),
    ("Pod deletion failed but drain is enabled in spec. Will attempt a node drain", "Warning"),
    ("Failed to restart driver pod %s", "Warning"),
    ("Failed to handle timeout for job completions, %s", "Warning"),
    ("Failed to remove annotation used to track job completions: %s", "Warning"),
    # validation_manager.go passes the error with no verb for it: Go appends it so
    ("Failed to handle timeout for validation state%!(EXTRA string=%s)", "Warning"),
    # node_upgrade_state_provider.go ChangeNodeUpgradeAnnotation, when the patch fails
    ("Failed to update node annotation %s=%s: %s", "Warning"),
    # upgrade_inplace.go ProcessUpgradeRequiredNodes
    ("%s, will retry", "Warning"),
}


def test_the_emulators_event_catalogue_is_upstreams() -> None:
    """Every message the emulator may record is one of upstream's calls, and no other."""
    ours = {(re.sub(r"\{[a-z]+\}", "%s", t), etype) for t, etype in M.UPSTREAM.items()}
    assert ours == UPSTREAM_CALLS


@pytest.mark.parametrize("reason,etype,message", [
    ("GPUDriverUpgrade", "Warning", "Failed to validate driver upgrade: validation timeout exceeded"),
    ("GPUDriverUpgrade", "Normal", "Failed to drain the node, timeout"),
    ("DriverUpgrade", "Normal", "Scheduling drain of the node"),
    ("GPUDriverUpgrade", "Warning", ("Failed to delete workload pods on the node for the "
                                     "driver upgrade")),
])
def test_invented_events_are_refused(start_sim: Any, reason: str, etype: str, message: str) -> None:
    """The validation timeout is only logged upstream (``validation_manager.go``
    ``handleTimeout``); a wrong type, reason or a message without its error is not upstream's."""
    sim = start_sim("healthy", speed=1)
    node = next(iter(sim.operator.world.pool_members.values()))[0]
    with pytest.raises(ValueError, match="not an event upstream records"):
        sim.operator.world.event(node, reason, message, etype)
    sim.operator.world.event(node, "GPUDriverUpgrade", "Failed to drain the node, timeout", "Warning")
    events = sim.core.list_namespaced_event("default").items
    assert [e.message for e in events if e.involved_object.name == node] \
        == ["Failed to drain the node, timeout"]


def _event(store: Store, name: str) -> None:
    obj = node_event(name, "uid", "GPUDriverUpgrade", "Scheduling drain of the node",
                     store.clock.rfc3339(), 1)
    store.create("events", obj)


def test_events_expire_after_the_ttl_unless_written_again() -> None:
    """kube-apiserver's event lease: --event-ttl (1 h) after the last write, then DELETED."""
    store = Store(SimClock(start=1_800_000_000.0, frozen=True))
    _event(store, "a")
    _event(store, "b")
    store.clock.advance(1800)
    store.mutate("events", "b.0000000000000001", "default", 
                 lambda e: e.update(count=2, lastTimestamp=store.clock.rfc3339()))
    store.clock.advance(eventttl.EVENT_TTL_S - 1800 - 1)
    assert eventttl.expire(store) == 0
    store.clock.advance(1)
    assert eventttl.expire(store) == 1
    assert [e["metadata"]["name"] for e in store.list("events")[0]] == ["b.0000000000000001"]
    store.clock.advance(1800)
    assert eventttl.expire(store) == 1 and store.list("events")[0] == []


def test_the_running_emulator_expires_events(start_sim: Any) -> None:
    """Through the API: an Event is listed, then gone about an hour of sim time later."""
    sim = start_sim("healthy", speed=1200)
    node = next(iter(sim.operator.world.pool_members.values()))[0]
    written = sim.emulated()  # before the write: a slow list below must not make it later
    sim.operator.world.event(node, "GPUDriverUpgrade", "Scheduling drain of the node")
    mine = lambda: [e for e in sim.core.list_namespaced_event("default").items
                    if e.involved_object.name == node]
    assert mine()
    sim.wait_for(lambda: not mine(), eventttl.EVENT_TTL_S + 600, "event expired")
    assert sim.emulated() - written >= eventttl.EVENT_TTL_S - 1


def test_the_restart_failure_is_recorded_on_the_driver_pod_only(start_sim: Any) -> None:
    """k8s-operator-libs ``pkg/upgrade/pod_manager.go`` ``SchedulePodsRestart`` records
    "Failed to restart driver pod %s" on the Pod it could not delete, not on the Node (was:
    accepted on a Node, refused on a Pod)."""
    sim = start_sim("healthy", speed=1)
    world = sim.operator.world
    node = next(iter(world.pool_members.values()))[0]
    message = "Failed to restart driver pod the server is busy"
    with pytest.raises(ValueError, match="not an event upstream records"):
        world.event(node, "GPUDriverUpgrade", message, "Warning")
    pods = sim.core.list_namespaced_pod("gpu-operator",
                                        label_selector="app=nvidia-driver-daemonset").items
    pod = sim.cluster.store.get("pods", pods[0].metadata.name, "gpu-operator")
    world.pod_event(pod, "GPUDriverUpgrade", message, "Warning")
    (event,) = [e for e in sim.core.list_namespaced_event("gpu-operator").items
                if e.message == message]
    assert (event.involved_object.kind, event.involved_object.name) == (
        "Pod", pods[0].metadata.name)
    with pytest.raises(ValueError, match="on a Pod"):
        world.pod_event(pod, "GPUDriverUpgrade", "Scheduling drain of the node")
