"""The emulated GPU Operator stack: one loop that runs every controller against the store.

Work is event driven: store watches mark nodes dirty (cheap, in the writer's thread) and wake
the loop; each node also asks to be woken when its next container step is due. Cluster-wide
controllers (DaemonSet status, ClusterPolicy status, the scheduler) run when flagged. The
upgrade controller and the scenario timeline run as their own tasks on the same loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from typing import Any

from gputui import gctuning
from gputui.sim import eventttl
from gputui.sim.clock import SimClock
from gputui.sim.nodeside import NodeSide
from gputui.sim.operator import daemonsets, mig, nodectl, policy
from gputui.sim.operator import keys as K
from gputui.sim.operator.exporter import Exporters
from gputui.sim.operator.timeline import Timeline
from gputui.sim.operator.upgrade import Upgrader
from gputui.sim.operator.workloads import Workloads
from gputui.sim.operator.world import (
    ALL_NODES,
    POLICY_SPEC,
    SCHEDULE,
    STATUS,
    UPGRADE,
    World,
)
from gputui.sim.scenario import Scenario
from gputui.sim.store import Store, WatchEvent

log = logging.getLogger(__name__)
MAX_SLEEP = 30.0  # emulated seconds between passes when nothing is due


class Operator:
    """Everything that acts on the emulated cluster; ``start``/``stop`` from the cluster loop."""

    def __init__(self, store: Store, clock: SimClock, nodeside: NodeSide, scenario: Scenario,
                 exporters_port: int | None = None):
        self.world = World(store, clock, nodeside, scenario)
        self.workloads = Workloads(self.world)
        self.exporters = Exporters(self.world, exporters_port, self.workloads.gpu_users,
                                   self._running_on)
        self.upgrader = Upgrader(self.world)
        self._upgrade_keys: dict[str, tuple[str | None, str | None]] = {}
        self._policy_generation: int | None = None
        self.timeline = Timeline(self.world, self)
        self._tasks: list[asyncio.Task[Any]] = []
        self.event_ttl = eventttl.EVENT_TTL_S
        self._watches: list[Any] = []
        self._due: list[tuple[float, str]] = []

    @property
    def store(self) -> Store:
        return self.world.store

    async def start(self) -> None:
        """Create the scenario's cluster, then start the controllers."""
        world = self.world
        world.loop = asyncio.get_running_loop()
        world.wake = asyncio.Event()
        # the scenario starts when the controllers do: setting up takes no emulated time
        with world.clock.held():
            self.timeline.start = world.clock.now()
            # tens of thousands of fresh dicts: collections would make set-up quadratic; the
            # converged objects then live for the whole run: frozen, they are not rescanned
            with gctuning.paused(freeze_after=True):
                # no client has seen the set-up's events (the server is not up yet): they
                # are not logged, and a watch from the first list's version works
                with world.store.unlogged():
                    self.bootstrap()
                world.setup_statuses.clear()
                world.setup_pods.clear()
            for resource, handler in (("nodes", self._on_node), ("pods", self._on_pod),
                                      ("clusterpolicies.nvidia.com", self._on_policy),
                                      ("nvidiadrivers.nvidia.com", self._on_policy),
                                      ("configmaps", self._on_configmap)):
                self._watches.append(world.store.watch(resource, handler)[0])
            await self.exporters.start()
            for coro in (self._loop(), self.upgrader.run(), self.timeline.run(),
                         self._expire()):
                self._tasks.append(asyncio.create_task(coro))

    async def _expire(self) -> None:
        """Delete Events past kube-apiserver's ``--event-ttl`` (:mod:`gputui.sim.eventttl`)."""
        while True:
            await self.world.clock.sleep(eventttl.SWEEP_EVERY_S)
            eventttl.expire(self.store, self.event_ttl)

    async def stop(self) -> None:
        for watch in self._watches:
            watch.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            # broad: stopping must finish, whatever a controller task died of
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.world.clock.close()
        await self.exporters.stop()

    # ------------------------------------------------------------- bootstrap
    def bootstrap(self) -> None:
        """Namespace, operator pod, ClusterPolicy, ConfigMaps, DaemonSets, then node pools."""
        world, sc = self.world, self.world.scenario
        now = world.clock.now()
        world.store.create("namespaces", {"metadata": {"name": world.ns, "labels": {
            "kubernetes.io/metadata.name": world.ns}}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}}, manager="helm")
        self.workloads.operator_pod(now)
        if sc.cluster_policy_present:
            world.store.create("clusterpolicies.nvidia.com",
                               policy.cluster_policy(K.CLUSTER_POLICY_NAME,
                                                     sc.cluster_policy_spec),
                               manager="helm")
            for extra in sc.extra_cluster_policies:
                world.store.create("clusterpolicies.nvidia.com",
                                   policy.cluster_policy(extra, {}), manager="helm")
            world.store.create("configmaps", mig.default_config_map(world.ns),
                               manager=K.M_OPERATOR)
        if sc.device_plugin_config:
            cfg = sc.device_plugin_config
            data = {str(k): str(v) for k, v in (cfg.get("data") or {}).items()}
            world.store.create("configmaps",
                               {"metadata": {"name": cfg["name"], "namespace": world.ns},
                                "data": data},
                               manager="kubectl-client-side-apply")
        daemonsets.reconcile(world)
        converged = [pool for pool in sc.pools if pool.converged and pool.count]
        for pool in converged:
            for _ in range(pool.count):
                nodectl.add_node(world, pool, now, converged=True)
        if converged:
            world.mark(None, STATUS, SCHEDULE)
        self.workloads.setup(now)
        daemonsets.all_status(world)
        policy.update_status(world)
        for pool in sc.pools:
            if not pool.converged:
                for _ in range(pool.count):
                    nodectl.add_node(world, pool, now, converged=False)

    # ----------------------------------------------------------------- watch
    def _on_node(self, event: WatchEvent) -> None:
        name = event.obj["metadata"]["name"]
        labels = event.obj["metadata"].get("labels") or {}
        # the upgrade controller's node predicate: only its state or skip label wakes it
        keys = (labels.get(K.UPGRADE_STATE), labels.get(K.UPGRADE_SKIP))
        flags = [STATUS, SCHEDULE]
        if self._upgrade_keys.get(name) != keys or event.type == "DELETED":
            self._upgrade_keys[name] = keys
            flags.append(UPGRADE)
        self.world.mark(name if name in self.world.nodes else None, *flags)

    def _on_pod(self, event: WatchEvent) -> None:
        meta = event.obj["metadata"]
        owner = self.world.pod_index.get(meta["name"])
        if owner and meta.get("namespace") == self.world.ns:
            self.world.mark(owner[0], STATUS)
        node = (event.obj.get("spec") or {}).get("nodeName")
        if event.type == "DELETED" or owner is None:
            # pods do not wake the upgrade controller (it notices them at its requeue)
            self.world.mark(node if node in self.world.nodes else None, SCHEDULE)

    def _on_policy(self, event: WatchEvent) -> None:
        # the upgrade controller watches ClusterPolicy with a generation-changed predicate:
        # its own status writes do not wake it, a spec change (a new driver version) does
        generation = event.obj["metadata"].get("generation")
        flags = [POLICY_SPEC]
        if generation != self._policy_generation or event.type != "MODIFIED":
            self._policy_generation = generation
            flags.append(UPGRADE)
        self.world.mark(None, *flags)

    def _on_configmap(self, event: WatchEvent) -> None:
        if event.obj["metadata"].get("namespace") == self.world.ns:
            self.world.mark(None, ALL_NODES)

    # ------------------------------------------------------------------ loop
    async def _loop(self) -> None:
        world = self.world
        while True:
            try:
                self._pass()
            except Exception:  # broad: a bug in one controller must not stop the emulator
                log.exception("emulated operator pass failed")
            now = world.clock.now()
            nxt = self._due[0][0] if self._due else now + MAX_SLEEP
            nxt = min(nxt, self.workloads.next_due or nxt, now + MAX_SLEEP)
            assert world.wake is not None
            await world.clock.wait(world.wake, nxt - now)
            world.wake.clear()

    def _pass(self) -> None:
        world = self.world
        now = world.clock.now()
        dirty, flags = world.take_dirty()
        if POLICY_SPEC in flags:
            flags.add(ALL_NODES)
            if daemonsets.reconcile(world):
                # an operand DaemonSet's generation changed: the upgrade controller's
                # DaemonSet watch (generation-changed predicate) wakes it
                flags.add(UPGRADE)
        if ALL_NODES in flags:
            dirty.update(world.nodes)
        while self._due and self._due[0][0] <= now:
            dirty.add(heapq.heappop(self._due)[1])
        for name in sorted(dirty):
            run = world.nodes.get(name)
            if run is None:
                continue
            wake = nodectl.reconcile_node(world, run, now)
            if wake is not None and (run.next_at is None or wake < run.next_at or run.next_at <= now):
                run.next_at = wake
                heapq.heappush(self._due, (wake, name))
        if self.workloads.tick(now, SCHEDULE in flags):
            flags.add(STATUS)
        more_dirty, more_flags = world.take_dirty()
        world.dirty |= more_dirty
        flags |= more_flags
        if SCHEDULE in more_flags:  # capacity changed during this pass: schedule next pass
            world.mark(None, SCHEDULE)
        if STATUS in flags or dirty:
            daemonsets.all_status(world)
            policy.update_status(world)
        if UPGRADE in flags:
            self.upgrader.kick()
        self.exporters.sync()
        if more_dirty:
            world.mark(None)

    # --------------------------------------------------------------- helpers
    def _running_on(self, node: str) -> list[Any]:
        """The workload pods running on ``node`` (what the exporter's pod mapping sees)."""
        return [t for t in self.workloads.pods.values() if t.node == node and not t.done]

    def gpu_users(self, node: str) -> dict[int, Any]:
        """GPU index -> the workload pod using it now (what an XID's clean-up kills)."""
        return dict(self.workloads.gpu_users(node))

    def add_nodes(self, pool_name: str, count: int,
                  driver_build: float | None = None) -> list[str]:
        """New nodes join a pool now (timeline ``join``); their first driver build takes
        ``driver_build`` seconds (the pool's own when None)."""
        pool = self.world.pools[pool_name]
        now = self.world.clock.now()
        return [nodectl.add_node(self.world, pool, now, converged=False,
                                 driver_build=driver_build).name for _ in range(count)]
