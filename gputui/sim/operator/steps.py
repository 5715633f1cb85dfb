"""Operand-specific container behaviour: k8s-driver-manager, the driver, cuda-validation.

The generic step (wait for a marker, take a few seconds) lives in :mod:`kubelet`; these are
the containers whose real behaviour matters to an on-call operator: the driver manager
pausing operands and refusing to unload a busy driver, the driver build failing after a
kernel update, the CUDA validator pod, and the main containers whose readiness publishes
capacity, GFD labels and metrics.
"""

from __future__ import annotations

from gputui.sim.operator import keys as K
from gputui.sim.operator.joining import first_build_wait
from gputui.sim.operator.kubelet import DURATIONS, Outcome, Step, _elapsed
from gputui.sim.operator.runtime import ContainerRun, NodeRun, PodRun
from gputui.sim.operator.sharing import missing_config
from gputui.sim.operator.world import World

#: nvidia-driver-ctr's startupProbe (gpu-operator assets/state-driver/0500_daemonset.yaml)
DRIVER_STARTUP_DELAY_S, DRIVER_STARTUP_PERIOD_S = 60.0, 10.0
PAUSABLE = [o for o in K.CONTAINER_DEPLOY_OPERANDS if o != "driver"] + ["mig-manager"]


def _paused_value(value: str) -> str:
    if value == "false" or value.endswith(K.PAUSED_DRIVER_UPGRADE):
        return value
    return K.PAUSED_DRIVER_UPGRADE if value == "true" else f"{value}_{K.PAUSED_DRIVER_UPGRADE}"


def _restored_value(value: str) -> str:
    if value == K.PAUSED_DRIVER_UPGRADE:
        return "true"
    return value[: -len("_" + K.PAUSED_DRIVER_UPGRADE)] if value.endswith(K.PAUSED_DRIVER_UPGRADE) else value


def set_paused(world: World, node: str, paused: bool) -> None:
    """k8s-driver-manager's evict/reschedule of operands by rewriting deploy labels (§1.5)."""
    labels = (world.node_obj(node) or {}).get("metadata", {}).get("labels", {})
    change: dict[str, str | None] = {}
    for operand in PAUSABLE:
        key = K.DEPLOY_PREFIX + operand
        if key in labels:
            value = _paused_value(labels[key]) if paused else _restored_value(labels[key])
            if value != labels[key]:
                change[key] = value
    if change:
        world.set_labels(node, change, K.M_DRIVER_MANAGER)


def driver_manager(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """Evict operands, unload the old driver, restore operands — or fail if the driver is busy."""
    if not run.entered:
        run.entered = True
        world.log(run.name, c.name, "Getting current value of the 'nvidia.com/gpu.deploy.operator-validator' node label")
        if node.driver_loaded:
            world.log(run.name, c.name, "Shutting down all GPU clients on the current node by disabling their component-specific nodeSelector labels")
            set_paused(world, node.name, True)
    if node.driver_loaded and any(k != "driver" for k in node.pods):
        return ("wait", now + 2.0)
    outcome = _elapsed(c, now, c.name)
    if outcome[0] == "wait":
        return outcome
    if node.crash == "driver-in-use" and node.driver_loaded:
        world.log(run.name, c.name, "Unloading NVIDIA driver kernel modules...")
        world.log(run.name, c.name, "nvidia_modeset       1306624  0\nnvidia_uvm           1990656  4\nnvidia              56705024  89 nvidia_uvm,nvidia_modeset")
        world.log(run.name, c.name, "Could not unload NVIDIA driver kernel modules, driver is in use")
        set_paused(world, node.name, False)
        return ("fail", 0.0)
    if node.driver_loaded:
        world.log(run.name, c.name, "Unloading NVIDIA driver kernel modules...")
        node.driver_loaded = ""
        node.markers.clear()
    world.log(run.name, c.name, "Rescheduling all GPU clients on the current node by enabling their component-specific nodeSelector labels")
    set_paused(world, node.name, False)
    return ("done", 0.0)


def driver_ctr(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """Build and load the driver; after a breaking kernel update the headers are missing."""
    if c.restarts == 0 or not run.entered:
        run.entered = True
        world.log(run.name, c.name, f"DRIVER_VERSION={run.driver_version}")
        world.log(run.name, c.name, "Resolving Linux kernel version...")
    if node.crash == "kernel-headers":
        if now - (c.started_at or now) < 20:
            return ("wait", (c.started_at or now) + 20)
        world.log(run.name, c.name, "Installing Linux kernel headers...")
        world.log(run.name, c.name, f"E: Unable to locate package linux-headers-{node.kernel}")
        world.log(run.name, c.name, f"Could not install Linux kernel headers for kernel {node.kernel}")
        world.log(run.name, c.name, "Stopping NVIDIA persistence daemon...")
        return ("fail", 0.0)
    joining = first_build_wait(node, c, now)  # a joined node's first build: minutes
    if joining is not None:
        return ("wait", joining)
    start = c.started_at or now
    built = start + DURATIONS[c.name]
    if now < built:
        return ("wait", built)
    if node.driver_loaded != run.driver_version:
        world.log(run.name, c.name, "Loading NVIDIA driver kernel modules... Done, now waiting for signal")
        node.driver_loaded = run.driver_version
    ready_at = startup_probe_passes(start, built)
    if now < ready_at:
        return ("wait", ready_at)
    node.markers.add(".driver-ctr-ready")  # what startup-probe.sh touches when it passes
    return ("done", 0.0)


def startup_probe_passes(start: float, built: float) -> float:
    """The first startup probe at or after the build: gpu-operator
    ``assets/state-driver/0500_daemonset.yaml`` probes nvidia-driver-ctr after
    ``initialDelaySeconds: 60``, then every ``periodSeconds: 10``, so the container is never
    Ready sooner than 60 s after it starts, however fast the build."""
    first = start + DRIVER_STARTUP_DELAY_S
    if built <= first:
        return first
    periods = -(-(built - first) // DRIVER_STARTUP_PERIOD_S)
    return first + periods * DRIVER_STARTUP_PERIOD_S


def toolkit_ctr(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    outcome = _elapsed(c, now, c.name)
    if outcome[0] == "done":
        node.markers.add("toolkit-installed")
    return outcome


def cuda_validation(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """Launch ``nvidia-cuda-validator-xxxxx`` and poll it 60 x 5 s for ``Succeeded``, then give
    up and exit 1 (gpu-operator ``cmd/nvidia-validator/main.go``, ``waitForPod``)."""
    from gputui.sim.operator import validatorpod as V

    if c.polls == 0:  # a new run of the container: a new pod, as upstream's validate() does
        V.launch(world, node, run, now)
        c.polls, c.next_poll = 1, now + V.WAIT_INTERVAL
        return ("wait", c.next_poll)
    name = V.ensure(world, node, run, now)
    pod = world.store.get("pods", name, world.ns)
    phase = (pod or {}).get("status", {}).get("phase") or "Pending"
    if phase == "Succeeded":
        return ("done", 0.0)
    if now < c.next_poll:  # woken early by some other change: not a poll yet
        return ("wait", c.next_poll)
    if c.polls >= V.WAIT_RETRIES:
        world.log(run.name, c.name, f"Error: gave up waiting for pod {name} to be available")
        return ("fail", 0.0)
    c.polls += 1
    c.next_poll = now + V.WAIT_INTERVAL
    world.log(run.name, c.name, f"pod {name} is curently in {phase} phase")
    return ("wait", c.next_poll)


def config_manager(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """config-manager selects the node's config from the ConfigMap; a name it lacks is fatal
    (k8s-device-plugin ``cmd/config-manager/main.go``: "specified config X does not exist"),
    in the init container and in the sidecar that watches the label afterwards."""
    labels = (world.node_obj(node.name) or {}).get("metadata", {}).get("labels", {})
    cm, default = world.device_plugin_config()
    if missing_config(labels, cm, default) is not None:
        # upstream names the label's value here, "" when only the default is missing
        named = labels.get(K.DEVICE_PLUGIN_CONFIG, "")
        world.log(run.name, c.name, f"Error: specified config {named} does not exist")
        return ("fail", 0.0)
    if c.ready:  # the sidecar keeps watching the label
        return ("done", 0.0)
    return _elapsed(c, now, c.name)


def ready_after(seconds: float, effect: str) -> Step:
    """A main container that becomes ready after ``seconds`` and then publishes something."""
    def step(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
        due = (c.started_at or now) + seconds
        if now < due:
            return ("wait", due)
        if effect == "validated":
            world.log(run.name, c.name, "all validations are successful")
        return ("done", 0.0)
    return step


_plugin_ready = ready_after(3.0, "plugin")


def device_plugin(world: World, node: NodeRun, run: PodRun, c: ContainerRun, now: float) -> Outcome:
    """The plugin builds its device map at start and exits on a MIG layout it cannot serve
    (:func:`gputui.sim.operator.nodes.plugin_error`), so the container crash-loops."""
    from gputui.sim.operator.nodes import plugin_error

    error = plugin_error(node, world.mig_strategy())
    if error:
        world.log(run.name, c.name, "error starting plugins: error getting plugins: unable to "
                  "create plugins: failed to construct resource managers: error building device "
                  f"map: error building device map from config.resources: {error}")
        return ("fail", 0.0)
    return _plugin_ready(world, node, run, c, now)


INIT_STEPS: dict[str, Step] = {"k8s-driver-manager": driver_manager,
                               "cuda-validation": cuda_validation,
                               "config-manager-init": config_manager}
MAIN_STEPS: dict[str, Step] = {
    "nvidia-driver-ctr": driver_ctr,
    "nvidia-container-toolkit-ctr": toolkit_ctr,
    "nvidia-device-plugin": device_plugin,
    "gpu-feature-discovery": ready_after(3.0, "gfd"),
    "nvidia-dcgm-exporter": ready_after(8.0, "exporter"),
    "nvidia-mig-manager": ready_after(3.0, "migmgr"),
    "nvidia-operator-validator": ready_after(1.0, "validated"),
    "config-manager": config_manager,
}
