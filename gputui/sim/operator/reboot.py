"""A node rebooting, as the control plane sees it: silence, then ``Unknown``, then Ready.

While the machine reboots its kubelet posts nothing, so the Node object keeps its last status
until kube-controller-manager's node lifecycle controller notices the missing heartbeat after
``--node-monitor-grace-period`` (50 s default since Kubernetes 1.32, kubernetes PR #126287;
40 s before; the emulated cluster is 1.34): it then sets every kubelet condition to
``Unknown``, reason ``NodeStatusUnknown``, "Kubelet stopped posting node status."
(``pkg/controller/nodelifecycle/node_lifecycle_controller.go`` ``tryUpdateNodeHealth``). When
the machine is up the kubelet posts Ready again with the new boot ID and kernel, and its GPU
resources at 0, capacity and allocatable, until the device plugin registers: the restarted
kubelet's device manager restores each plugin resource from its checkpoint with no devices
(kubernetes ``pkg/kubelet/cm/devicemanager/manager.go``, ``readCheckpoint``: "the resource
capacity will stay zero till the corresponding device plugin re-registers"). The emulated node's pods make no progress
while it is down. Not emulated: the ``node.kubernetes.io/unreachable`` taints the controller
adds, and marking the node's pods not ready.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import gpufaults
from gputui.sim.operator import keys as K
from gputui.sim.operator.nodes import node_conditions
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.world import World

#: kube-controller-manager ``--node-monitor-grace-period`` default (Kubernetes >= 1.32).
NODE_MONITOR_GRACE_S = 50.0
#: firmware POST of an 8-GPU server, the OS boot and the kubelet start: a couple of minutes,
#: within Kubernetes' 300 s not-ready toleration as a routine reboot is
BOOT_S = 150.0
#: the node lifecycle controller's manager name in managedFields
M_NODE_CONTROLLER = "kube-controller-manager"
_UNKNOWN = {"status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status."}


def start(run: NodeRun, now: float, kernel: str) -> None:
    """The machine goes down now and boots ``kernel``; the Node object is untouched yet."""
    run.down_since = now
    run.boot_kernel = kernel
    run.marked_unknown = False


def reconcile(world: World, run: NodeRun, now: float) -> float | None:
    """While the node is down: when it next needs attention; None once it is up."""
    if run.down_since is None:
        return None
    up_at = run.down_since + BOOT_S
    if now >= up_at:
        _boot(world, run, now)
        return None
    unknown_at = run.down_since + NODE_MONITOR_GRACE_S
    if not run.marked_unknown:
        if now < unknown_at:
            return unknown_at
        _mark_unknown(world, run.name, world.clock.rfc3339(now))
        run.marked_unknown = True
    return up_at


def _mark_unknown(world: World, name: str, stamp: str) -> None:
    def change(obj: dict[str, Any]) -> None:
        for cond in obj["status"].get("conditions") or []:
            if cond.get("type") in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                cond.update(_UNKNOWN, lastTransitionTime=stamp)
    world.write_node(name, change, M_NODE_CONTROLLER)


def _boot(world: World, run: NodeRun, now: float) -> None:
    name, kernel = run.name, run.boot_kernel or run.kernel
    run.kernel, run.down_since, run.marked_unknown = kernel, None, False
    run.plugin_down_since = None  # the new kubelet has no plugin, and zeroed it already
    gpufaults.boot(run, now)  # the driver enumerates what is still on the bus

    def change(obj: dict[str, Any]) -> None:
        obj["metadata"]["labels"][K.NFD_KERNEL_FULL] = kernel
        obj["status"]["conditions"] = node_conditions(True, world.clock.rfc3339(now))
        obj["status"]["nodeInfo"]["kernelVersion"] = kernel
        obj["status"]["nodeInfo"]["bootID"] = f"{name}-{kernel}"
        for field in ("capacity", "allocatable"):
            for res in list(obj["status"].get(field, {})):
                if res.startswith("nvidia.com/"):
                    obj["status"][field][res] = "0"
    world.write_node(name, change, K.M_KUBELET)
