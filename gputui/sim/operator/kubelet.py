"""The kubelet's view of operand pods: init containers progressing in the real order (§1.3).

Each container is a small step function reading and writing the node's marker files, the way
the real init containers wait for ``/run/nvidia/validations/*-ready``. A pod advances through
as many steps as it can at once and is written to the store once per call, so a node's whole
chain costs a few dozen writes spread over a couple of emulated minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.objects import pod_status
from gputui.sim.operator.runtime import ContainerRun, NodeRun, PodRun
from gputui.sim.operator.world import World

POLL = 5.0
PLUGIN_RETRIES = 30
# (outcome, wait-until) from a step: ("wait", t), ("done", 0) or ("fail", 0)
Outcome = tuple[str, float]
Step = Callable[[World, NodeRun, PodRun, ContainerRun, float], Outcome]

#: how long each container's work takes; the driver build is a compile and module load (its
#: readiness also waits for the startup probe, ``steps.startup_probe_passes``)
DURATIONS = {"nvidia-driver-ctr": 75.0, "nvidia-container-toolkit-ctr": 10.0,
             "driver-validation": 5.0, "toolkit-validation": 3.0, "plugin-validation": 3.0,
             "config-manager-init": 2.0, "mps-control-daemon-mounts": 2.0,
             "k8s-driver-manager": 10.0}
GATES = {"driver-validation": ".driver-ctr-ready", "plugin-validation": "capacity"}
#: main containers whose step runs again once ready: they watch something and can fail
#: later (config-manager watches its node label, k8s-device-plugin cmd/config-manager)
WATCHING = frozenset({"config-manager"})


def _elapsed(c: ContainerRun, now: float, name: str) -> Outcome:
    due = (c.started_at or now) + DURATIONS.get(name, 4.0)
    return ("done", 0.0) if now >= due else ("wait", due)


def step_generic(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """Wait for this container's marker (if any), then take its usual time."""
    gate = GATES.get(c.name)
    if c.name == "toolkit-validation":
        gate = "toolkit-installed" if run.operand == "validator" else "toolkit-ready"
    if c.name == "driver-validation" and node.host_driver:
        gate = None
    if gate == "capacity":
        if not _has_gpu_capacity(world, node.name):
            if now < c.next_poll:  # woken early by some other change: not a retry yet
                return ("wait", c.next_poll)
            c.polls += 1
            c.next_poll = now + POLL
            tries = c.polls
            if tries > PLUGIN_RETRIES:  # the validator gives up after 30 × 5 s (§1.3)
                return ("fail", 0.0)
            world.log(run.name, c.name, f"GPU resources are not yet discovered by the node, retry: {tries}")
            return ("wait", now + POLL)
    elif gate and gate not in node.markers:
        if c.name == "driver-validation" and run.operand == "validator":
            world.log(run.name, c.name, "waiting for the driver container to be ready "
                      "(/run/nvidia/validations/.driver-ctr-ready)")
        return ("wait", now + POLL)
    return _elapsed(c, now, c.name)


def _has_gpu_capacity(world: World, name: str) -> bool:
    """A ``nvidia.com/gpu*`` or ``nvidia.com/mig-*`` resource with capacity and allocatable:
    ``validateGPUResource`` waits for the capacity, then ``getGPUResourceName`` needs one
    allocatable for the workload pod (gpu-operator ``cmd/nvidia-validator/main.go``). Upstream
    fails at once when capacity is left over from a stopped plugin (the kubelet keeps it 5
    min) and restarts; here the wait covers both, with the same outcome: no GPU, no pass."""
    status = (world.node_obj(name) or {}).get("status") or {}
    cap, alloc = status.get("capacity") or {}, status.get("allocatable") or {}
    return any(k.startswith((K.RESOURCE_GPU, K.RESOURCE_MIG_PREFIX)) and int(v) >= 1
               and int(alloc.get(k, 0)) >= 1 for k, v in cap.items())


ON_DONE = {"driver-validation": "driver-ready", "cuda-validation": "cuda-ready",
           "plugin-validation": "plugin-ready"}


def on_init_done(node: NodeRun, run: PodRun, name: str) -> None:
    """Marker files an init container leaves when it completes."""
    if run.operand != "validator":
        return
    if name == "toolkit-validation":
        node.markers.add("toolkit-ready")
    elif name in ON_DONE:
        node.markers.add(ON_DONE[name])


def crash(c: ContainerRun, now: float, code: int = 1) -> None:
    """Container exited non-zero: count a restart and back off like the kubelet (10 s × 2ⁿ)."""
    c.restarts += 1
    c.last_exit = (code, "Error", c.started_at or now, now)
    c.crash_until = now + min(300.0, 10.0 * 2 ** (c.restarts - 1))
    c.started_at = None
    c.ready = False


def advance(world: World, node: NodeRun, run: PodRun, steps: dict[str, Step],
            main_steps: dict[str, Step], now: float) -> float | None:
    """Move a pod as far as it can go now; write it if anything changed; return next wake."""
    before = _fingerprint(run)
    wake: float | None = None
    for _ in range(12):
        wake = _one(world, node, run, steps, main_steps, now)
        if wake is None or wake > now:
            break
    if _fingerprint(run) != before:
        write_pod(world, node, run, now)
    return wake


def _one(world: World, node: NodeRun, run: PodRun, steps: dict[str, Step],
         main_steps: dict[str, Step], now: float) -> float | None:
    if not run.initialized:
        c = run.init[run.step]
        if c.started_at is None:
            if c.crash_until and now < c.crash_until:
                return c.crash_until
            c.started_at, c.crash_until, run.entered, c.polls = now, None, False, 0
            run.step_started = now
        outcome, until = steps.get(c.name, step_generic)(world, node, run, c, now)
        if outcome == "wait":
            return until
        if outcome == "fail":
            crash(c, now)
            return c.crash_until
        c.finished_at = now
        on_init_done(node, run, c.name)
        run.step += 1
        run.entered = False
        if run.initialized:
            run.phase = "Running"
            run.step_started = now
        return now
    return _run_mains(world, node, run, main_steps, now)


def _run_mains(world: World, node: NodeRun, run: PodRun, main_steps: dict[str, Step],
               now: float) -> float | None:
    """Start (or restart after back-off) the main containers and check their readiness."""
    wake: float | None = None
    for c in run.main:
        if c.started_at is None:
            if c.crash_until and now < c.crash_until:
                wake = min(wake or c.crash_until, c.crash_until)
                continue
            c.started_at, c.crash_until = now, None
        if c.ready and c.name not in WATCHING:
            continue
        outcome, until = main_steps.get(c.name, step_generic)(world, node, run, c, now)
        if outcome == "fail":
            crash(c, now)
            wake = min(wake or c.crash_until or now, c.crash_until or now)
        elif outcome == "wait":
            wake = min(wake or until, until)
        else:
            c.ready = True
    return wake


def _fingerprint(run: PodRun) -> tuple[object, ...]:
    return (run.step, run.phase, tuple((c.started_at, c.finished_at, c.restarts, c.ready,
                                        c.crash_until) for c in run.init + run.main))


def write_pod(world: World, node: NodeRun, run: PodRun, now: float) -> None:
    """Write the pod's status as the kubelet would (one store write)."""
    obj = world.store.get("pods", run.name, world.ns)
    if obj is None:
        return
    images = {c["name"]: c["image"] for c in
              (obj["spec"].get("initContainers") or []) + obj["spec"]["containers"]}
    status = pod_status(run, node, images, world.clock.rfc3339, now)

    def change(pod: dict[str, Any]) -> None:
        pod["status"] = status
    world.store.mutate("pods", run.name, world.ns, change, manager=K.M_KUBELET)
