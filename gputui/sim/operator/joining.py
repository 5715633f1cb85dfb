"""A joining node's first driver build takes minutes, not seconds.

A node that joins has nothing cached: the driver container pulls its image (about 1.2 GB,
see :data:`gputui.sim.operator.nodes._IMAGES`), installs the kernel headers for the node's
kernel and compiles the modules. NVIDIA's own guidance says so: "By default, NVIDIA GPU
drivers are built on the cluster nodes ... leading to ... long provisioning times" (GPU
Operator docs, "Precompiled Drivers for the NVIDIA GPU Operator"), and the driver container's
startup probe allows 21 min for it (gpu-operator ``assets/state-driver/0500_daemonset.yaml``).
So join -> allocatable takes several minutes here too (about 6: NFD, the operator's labels,
this build, toolkit, validator, device plugin), while everything after it (toolkit,
validator, device plugin, then GFD's ``nvidia.com/gpu.count``) keeps its usual pace.

Only the join path is slowed: nodes converged at scenario start and later rebuilds (a
reboot, a driver upgrade) take the driver container's usual time
(:data:`gputui.sim.operator.kubelet.DURATIONS`).
"""

from __future__ import annotations

from gputui.sim.operator.runtime import ContainerRun, NodeRun

#: emulated seconds of a joining node's first driver build (image pull, headers, compile)
JOIN_DRIVER_BUILD_SECONDS = 300.0


def first_build_wait(node: NodeRun, c: ContainerRun, now: float) -> float | None:
    """When the driver container of a joining node may finish its first build, while that
    is still ahead; None when the node is not on its first build (or it is over). How long
    it takes is the node's own (its pool's ``driverBuild``, or the join's)."""
    if not node.first_build:
        return None
    due = (c.started_at or now) + node.first_build_seconds
    if now < due:
        return due
    node.first_build = False
    return None
