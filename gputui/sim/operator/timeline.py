"""The scenario timeline: faults and operator-like actions at emulated times."""

from __future__ import annotations

import logging
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.world import World

log = logging.getLogger(__name__)


class Timeline:
    """Plays ``scenario.timeline`` against the running cluster."""

    def __init__(self, world: World, operator: Any):
        self.w = world
        self.op = operator
        self.start = world.clock.now()

    async def run(self) -> None:
        for event in self.w.scenario.timeline:
            delay = self.start + event.at - self.w.clock.now()
            if delay > 0:
                await self.w.clock.sleep(delay)
            try:
                self.apply(event.action, event.args)
            except Exception:
                log.exception("timeline action %s failed", event.action)
            # no "upgrade": the upgrade controller wakes on what the action changes (the
            # ClusterPolicy's generation, a node's state label), as upstream's watches do
            self.w.mark(None, "all-nodes", "ds", "policy")

    def apply(self, action: str, args: dict[str, Any]) -> None:
        getattr(self, "do_" + action.replace("-", "_"))(args)

    def do_kernel_update(self, args: dict[str, Any]) -> None:
        """The pool's nodes reboot into a new kernel; the driver breaks unless told otherwise."""
        for name in self.w.resolve(args):
            self._reboot(name, str(args.get("kernel", "5.15.0-1075-gke")))
            if args.get("breaksDriver", True):
                self.w.nodes[name].crash = "kernel-headers"

    def _reboot(self, name: str, kernel: str) -> None:
        run = self.w.nodes[name]
        run.kernel = kernel
        run.markers.clear()
        if not run.host_driver:
            run.driver_loaded = ""
        now = self.w.clock.now()
        for pod in run.pods.values():
            pod.step, pod.phase, pod.entered = 0, "Pending", False
            for c in pod.init + pod.main:
                if c.started_at is not None:
                    c.restarts += 1
                c.started_at = c.finished_at = c.crash_until = None
                c.ready = False
            pod.step_started = now

        def change(obj: dict[str, Any]) -> None:
            obj["metadata"]["labels"][K.NFD_KERNEL_FULL] = kernel
            obj["status"]["nodeInfo"]["kernelVersion"] = kernel
            obj["status"]["nodeInfo"]["bootID"] = f"{name}-{kernel}"
            for res in list(obj["status"].get("allocatable", {})):
                if res.startswith("nvidia.com/"):
                    obj["status"]["allocatable"][res] = "0"
        self.w.write_node(name, change, K.M_KUBELET)

    def do_crashloop(self, args: dict[str, Any]) -> None:
        """Break the driver: ``kernel-headers`` (driver build fails) or ``driver-in-use``.

        ``kernel-headers`` crashes the running driver container now, unless ``nextStart`` is
        true (then only the next driver start fails, e.g. the new pod of an upgrade).
        ``driver-in-use`` deletes the driver pod so its k8s-driver-manager finds GPU pods
        holding the driver and fails (Init:CrashLoopBackOff), as after an operator upgrade.
        """
        reason = str(args.get("reason", "kernel-headers"))
        now = self.w.clock.now()
        for name in self.w.resolve(args):
            run = self.w.nodes[name]
            run.crash = reason
            driver = run.pods.get("driver")
            if driver is None:
                continue
            if reason == "driver-in-use":
                self.w.store.delete("pods", driver.name, self.w.ns)
            elif not args.get("nextStart") and driver.initialized:
                from gputui.sim.operator.kubelet import crash
                crash(driver.main[0], now)
                run.markers.discard(".driver-ctr-ready")

    def do_validator_stuck(self, args: dict[str, Any]) -> None:
        """cuda-validation never finishes: the validator pod is restarted and hangs there."""
        for name in self.w.resolve(args):
            run = self.w.nodes[name]
            run.validator_stuck = True
            validator = run.pods.get("validator")
            if validator is not None and validator.initialized:
                self.w.store.delete("pods", validator.name, self.w.ns)

    def do_xid(self, args: dict[str, Any]) -> None:
        for name in self.w.resolve(args):
            gpu = self.w.nodes[name].gpus[int(args.get("gpu", 0))]
            gpu.xid = int(args.get("code", 79))
            gpu.fallen = gpu.xid == 79

    def do_driver_unscheduled(self, args: dict[str, Any]) -> None:
        """The node goes NotReady and its driver pod is left unscheduled (gpu-operator #688).

        A driver DaemonSet with an unscheduled pod stops the upgrade controller cluster-wide.
        """
        from gputui.sim.operator import daemonsets
        from gputui.sim.operator.nodes import node_conditions

        for name in self.w.resolve(args):
            run = self.w.nodes[name]
            run.driver_blocked = True
            driver = run.pods.get("driver")
            if driver is not None:
                daemonsets.delete_pod(self.w, run, driver)
            stamp = self.w.clock.rfc3339()

            def change(obj: dict[str, Any], stamp: str = stamp) -> None:
                obj["status"]["conditions"] = node_conditions(False, stamp)
                obj["status"]["conditions"][-1].update(
                    status="Unknown", reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.")
            self.w.write_node(name, change, "node-controller")
            daemonsets.unscheduled_driver_pod(self.w, name)

    def do_mig_config(self, args: dict[str, Any]) -> None:
        for name in self.w.resolve(args):
            self.w.set_labels(name, {K.MIG_CONFIG: str(args["config"])}, "kubectl-label")

    def do_mig_fail(self, args: dict[str, Any]) -> None:
        for name in self.w.resolve(args):
            self.w.nodes[name].mig_fail_next = True

    def do_driver_version(self, args: dict[str, Any]) -> None:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"].setdefault("driver", {})["version"] = str(args["version"])
        self.w.store.mutate("clusterpolicies.nvidia.com", K.CLUSTER_POLICY_NAME, None, change,
                            manager="kubectl-patch")

    def do_upgrade_policy(self, args: dict[str, Any]) -> None:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"].setdefault("driver", {}).setdefault("upgradePolicy", {}).update(args["policy"])
        self.w.store.mutate("clusterpolicies.nvidia.com", K.CLUSTER_POLICY_NAME, None, change,
                            manager="kubectl-patch")

    def do_join(self, args: dict[str, Any]) -> None:
        self.op.add_nodes(str(args["pool"]), int(args.get("count", 1)))

    def do_cordon(self, args: dict[str, Any]) -> None:
        for name in self.w.resolve(args):
            def change(obj: dict[str, Any]) -> None:
                obj["spec"]["unschedulable"] = True
            self.w.write_node(name, change, "kubectl-cordon")
