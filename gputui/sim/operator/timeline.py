"""The scenario timeline: faults and operator-like actions at emulated times."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from gputui.sim.operator import keys as K
from gputui.sim.operator import gpudrills, reboot
from gputui.sim.operator.world import ALL_NODES, STATUS, World
from gputui.sim.scenario import parse_duration


class AddsNodes(Protocol):
    """What the timeline asks of the operator (:class:`gputui.sim.operator.core.Operator`):
    a protocol, not an import of it, since the operator imports the timeline it plays."""

    def add_nodes(self, pool_name: str, count: int,
                  driver_build: float | None = None) -> list[str]: ...

    def gpu_users(self, node: str) -> dict[int, Any]: ...


#: a timeline action's handler: the Timeline and the event's fields
PLUGIN_DS = "nvidia-device-plugin-daemonset"
Handler = Callable[["Timeline", dict[str, Any]], None]

log = logging.getLogger(__name__)


class Timeline:
    """Plays ``scenario.timeline`` against the running cluster."""

    def __init__(self, world: World, operator: AddsNodes):
        self.world = world
        self.operator = operator
        self.start = world.clock.now()

    async def run(self) -> None:
        for event in self.world.scenario.timeline:
            delay = self.start + event.at - self.world.clock.now()
            if delay > 0:
                await self.world.clock.sleep(delay)
            try:
                self.apply(event.action, event.args)
            except Exception:  # broad: a bug in one fault is logged; the scenario plays on
                log.exception("timeline action %s failed", event.action)
            # no "upgrade": the upgrade controller wakes on what the action changes (the
            # ClusterPolicy's generation, a node's state label), as upstream's watches do
            self.world.mark(None, ALL_NODES, STATUS)

    def apply(self, action: str, args: dict[str, Any]) -> None:
        """Run ``action`` (a name the scenario loader accepted, ``scenario.ACTIONS``)."""
        HANDLERS[action](self, args)

    def do_kernel_update(self, args: dict[str, Any]) -> None:
        """The pool's nodes reboot into a new kernel; the driver breaks unless told otherwise."""
        for name in self.world.resolve(args):
            self._reboot(name, str(args.get("kernel", "5.15.0-1075-gke")))
            if args.get("breaksDriver", True):
                self.world.nodes[name].crash = "kernel-headers"

    def _reboot(self, name: str, kernel: str) -> None:
        """The machine goes down; :mod:`gputui.sim.operator.reboot` brings it back."""
        run = self.world.nodes[name]
        run.markers.clear()
        if not run.host_driver:
            run.driver_loaded = ""
        now = self.world.clock.now()
        for pod in run.pods.values():
            pod.step, pod.phase, pod.entered = 0, "Pending", False
            for c in pod.init + pod.main:
                if c.started_at is not None:
                    c.restarts += 1
                    # what the runtime reports for the run the reboot ended: a finished
                    # init container's success, a running container lost (Unknown, 255)
                    c.last_exit = ((0, "Completed", c.started_at, c.finished_at)
                                   if c.finished_at is not None else
                                   (255, "Unknown", c.started_at, now))
                c.started_at = c.finished_at = c.crash_until = None
                c.ready = False
            pod.step_started = now + reboot.BOOT_S
        reboot.start(run, now, kernel)
        self.world.mark(name)

    def do_crashloop(self, args: dict[str, Any]) -> None:
        """Break the driver: ``kernel-headers`` (driver build fails) or ``driver-in-use``.

        ``kernel-headers`` crashes the running driver container now, unless ``nextStart`` is
        true (then only the next driver start fails, e.g. the new pod of an upgrade).
        ``driver-in-use`` deletes the driver pod so its k8s-driver-manager finds GPU pods
        holding the driver and fails (Init:CrashLoopBackOff), as after an operator upgrade.
        """
        reason = str(args.get("reason", "kernel-headers"))
        now = self.world.clock.now()
        for name in self.world.resolve(args):
            run = self.world.nodes[name]
            run.crash = reason
            driver = run.pods.get("driver")
            if driver is None:
                continue
            if reason == "driver-in-use":
                self.world.store.delete("pods", driver.name, self.world.ns)
            elif not args.get("nextStart") and driver.initialized:
                from gputui.sim.operator.kubelet import crash
                crash(driver.main[0], now)
                run.markers.discard(".driver-ctr-ready")

    def do_validator_stuck(self, args: dict[str, Any]) -> None:
        """The validator pod is restarted and its CUDA pod cannot start (the runtime hook
        finds no working driver): cuda-validation gives up after 60 x 5 s and crash-loops."""
        for name in self.world.resolve(args):
            run = self.world.nodes[name]
            run.validator_stuck = True
            validator = run.pods.get("validator")
            if validator is not None and validator.initialized:
                self.world.store.delete("pods", validator.name, self.world.ns)

    def do_xid(self, args: dict[str, Any]) -> None:
        """A GPU raises an XID; the device plugin marks it unhealthy unless the XID is one
        it ignores (k8s-device-plugin ``internal/rm/health.go``), so allocatable drops.
        A fatal XID on a GPU a pod uses is followed by XID 45 (the driver cleaning up the
        killed contexts) unless ``follow`` is false (:mod:`gputui.sim.operator.gpufaults`)."""
        from gputui.sim.operator.gpufaults import raise_xid
        from gputui.sim.operator.health import marks_unhealthy, plugin_env

        plugin = self.world.store.get("daemonsets.apps", PLUGIN_DS, self.world.ns)
        env = plugin_env(plugin)
        for name in self.world.resolve(args):
            run = self.world.nodes[name]
            gpu = run.gpus[int(args.get("gpu", 0))]
            follow = bool(args.get("follow", True)) and gpu.index in self.operator.gpu_users(name)
            raise_xid(gpu, int(args.get("code", 79)), self.world.clock.now(), follow)
            gpu.fallen = gpu.xid == 79
            if "device-plugin" in run.pods and marks_unhealthy(gpu.xid, env):
                gpu.unhealthy = True

    def do_row_remap_failure(self, args: dict[str, Any]) -> None:
        """A memory bank runs out of spare rows: the exporter reports the GPU's
        ``DCGM_FI_DEV_ROW_REMAP_FAILURE`` as 1 from now on (it lasts until the GPU is replaced)."""
        for name in self.world.resolve(args):
            self.world.nodes[name].gpus[int(args.get("gpu", 0))].remap_failed = True

    def do_driver_unscheduled(self, args: dict[str, Any]) -> None:
        """The node goes NotReady and its driver pod is left unscheduled (gpu-operator #688).

        A driver DaemonSet with an unscheduled pod stops the upgrade controller cluster-wide.
        """
        from gputui.sim.operator import daemonsets
        from gputui.sim.operator.nodes import node_conditions

        for name in self.world.resolve(args):
            run = self.world.nodes[name]
            run.driver_blocked = True
            driver = run.pods.get("driver")
            if driver is not None:
                daemonsets.delete_pod(self.world, run, driver)
            stamp = self.world.clock.rfc3339()

            def change(obj: dict[str, Any], stamp: str = stamp) -> None:
                obj["status"]["conditions"] = node_conditions(False, stamp)
                obj["status"]["conditions"][-1].update(
                    status="Unknown", reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.")
            self.world.write_node(name, change, "node-controller")
            daemonsets.unscheduled_driver_pod(self.world, name)

    def do_mig_config(self, args: dict[str, Any]) -> None:
        for name in self.world.resolve(args):
            self.world.set_labels(name, {K.MIG_CONFIG: str(args["config"])}, "kubectl-label")

    def do_mig_fail(self, args: dict[str, Any]) -> None:
        for name in self.world.resolve(args):
            self.world.nodes[name].mig_fail_next = True

    def do_driver_version(self, args: dict[str, Any]) -> None:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"].setdefault("driver", {})["version"] = str(args["version"])
        self.world.store.mutate("clusterpolicies.nvidia.com", K.CLUSTER_POLICY_NAME, None, change,
                                manager="kubectl-patch")

    def do_upgrade_policy(self, args: dict[str, Any]) -> None:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"].setdefault("driver", {}).setdefault("upgradePolicy", {}).update(args["policy"])
        self.world.store.mutate("clusterpolicies.nvidia.com", K.CLUSTER_POLICY_NAME, None, change,
                                manager="kubectl-patch")

    def do_join(self, args: dict[str, Any]) -> None:
        build = args.get("driverBuild")
        self.operator.add_nodes(str(args["pool"]), int(args.get("count", 1)),
                                parse_duration(build, "join: driverBuild")
                                if build is not None else None)

    def do_cordon(self, args: dict[str, Any]) -> None:
        for name in self.world.resolve(args):
            def change(obj: dict[str, Any]) -> None:
                obj["spec"]["unschedulable"] = True
            self.world.write_node(name, change, "kubectl-cordon")

    def do_log(self, args: dict[str, Any]) -> None:
        """One line (any text, escapes included) in an operand pod's container log: what a
        driver build, a validator or a hostile workload might print (the ``line`` can hold
        terminal escapes, to rehearse that gputui shows them inert)."""
        operand = str(args.get("operand", "driver"))
        for name in self.world.resolve(args):
            pod = self.world.nodes[name].pods.get(operand)
            if pod is None or not pod.main:
                log.warning("timeline log: %s has no %s pod", name, operand)
                continue
            container = str(args.get("container") or pod.main[0].name)
            self.world.log(pod.name, container, str(args["line"]))


#: timeline action (as scenarios spell it) -> its handler; the keys are ``scenario.ACTIONS``
HANDLERS: dict[str, Handler] = {
    "kernel-update": Timeline.do_kernel_update,
    "crashloop": Timeline.do_crashloop,
    "validator-stuck": Timeline.do_validator_stuck,
    "xid": Timeline.do_xid,
    "row-remap-failure": Timeline.do_row_remap_failure,
    "driver-unscheduled": Timeline.do_driver_unscheduled,
    "mig-config": Timeline.do_mig_config,
    "mig-fail": Timeline.do_mig_fail,
    "driver-version": Timeline.do_driver_version,
    "upgrade-policy": Timeline.do_upgrade_policy,
    "join": Timeline.do_join,
    "cordon": Timeline.do_cordon,
    "log": Timeline.do_log,
    **gpudrills.HANDLERS,
}
