"""MIG enabled with no instances: a config applied successfully that leaves no GPU to use.

Decision, from upstream code (gpu-operator ``a22dbf671f2e``, k8s-device-plugin
``1b826acc6af3``, mig-parted ``bd7160f43f16``): ``all-enabled`` (or any config that turns MIG
on for a GPU without creating instances) is not a quiet state, under either strategy.

* mig-manager applies it and reports ``mig.config.state=success``, then restarts the
  validator and the GPU clients (mig-parted ``pkg/mig/reconfigure/reconfigure.go``, ``Run``;
  ``all-enabled`` is ``mig-enabled: true`` with no ``mig-devices``, ``pkg/mig/builder``).
* The device plugin skips MIG-enabled GPUs for ``nvidia.com/gpu`` under single and mixed and
  finds no MIG device on them (``internal/rm/device_map.go``, ``buildGPUDeviceMap`` and
  ``assertAllMigDevicesAreValid``): under ``single`` that is an error ("device N has no MIG
  devices configured") and the plugin exits, under ``mixed`` a warning and it advertises
  nothing ("No devices found. Waiting indefinitely", ``cmd/nvidia-device-plugin/main.go``).
  GFD labels ``<model>-MIG-INVALID`` under single ("at least one MIG device is enabled but
  empty", ``internal/lm/mig-strategy.go``).
* The validator's ``plugin-validation`` has no MIG exception: it waits 30 x 5 s for a
  ``nvidia.com/gpu*`` or ``nvidia.com/mig-*`` capacity, then needs one allocatable for its
  workload pod, and fails otherwise (gpu-operator ``cmd/nvidia-validator/main.go``,
  ``validateGPUResource``, ``getGPUResourceName``). The validator DaemonSet keeps an
  unavailable pod, so ``isDaemonSetReady`` makes the ClusterPolicy ``notReady``
  (``controllers/object_controls.go``).

So the node has no allocatable GPU and the ClusterPolicy stays notReady: a warning is the
truth. It is said once, on the node, with this code; the validator, the device plugin, the
unavailable GPUs and the ClusterPolicy's notReady are its symptoms and say so as ``info``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.findings_base import NodeContext
from gputui.domain.mig import MigSpec
from gputui.domain.model import Finding

#: MIG strategies under which the device plugin gives nothing for a MIG-enabled GPU
_MIG_STRATEGIES = frozenset({"single", "mixed"})
_ONE_G = re.compile(r"all-1g\.(\d+)gb")


def _empty(spec: MigSpec) -> bool:
    return spec.mig_enabled and not any(i.count > 0 for i in spec.instances)


def no_instances_config(ctx: NodeContext) -> str | None:
    """The applied MIG config when it turned MIG on for GPUs without instances and the node
    has no GPU to allocate; None otherwise (or when the config's content cannot be read)."""
    node = ctx.node
    if node.mig_state != L.MIG_STATE_SUCCESS or not node.mig_config or ctx.mig_specs is None:
        return None
    if node.mig_strategy not in _MIG_STRATEGIES or node.resources.allocatable > 0:
        return None
    specs = ctx.mig_specs.get(node.mig_config, ())
    return node.mig_config if any(_empty(s) for s in specs) else None


def example_layout(specs: Mapping[str, tuple[MigSpec, ...]], memory_mib: int) -> str:
    """An offered ``all-1g.<N>gb`` config, the one whose 8 slices best match the GPU's
    memory when known (``all-1g.10gb`` on an 80 GB GPU), else the first; "" when none."""
    sizes = [(name, int(m.group(1))) for name in specs if (m := _ONE_G.fullmatch(name))
             and any(s.instances for s in specs[name])]
    if not sizes:
        return ""
    if memory_mib <= 0:
        return sizes[0][0]
    return min(sizes, key=lambda item: abs(item[1] * 8 * 1024 - memory_mib))[0]


def symptom(ctx: NodeContext) -> str:
    """" (MIG enabled with no instances: see mig-no-instances)" for the findings this
    state causes on the node, "" when it does not hold."""
    return (f" (MIG enabled with no instances by {ctx.node.mig_config}: see {C.MIG_NO_INSTANCES})"
            if no_instances_config(ctx) else "")


def mig_no_instances(ctx: NodeContext) -> list[Finding]:
    """MIG is on with no instance, so no GPU can be allocated (see the module's decision)."""
    config = no_instances_config(ctx)
    if config is None:
        return []
    node = ctx.node
    memory = node.labels.get(L.GPU_MEMORY, "")
    example = example_layout(ctx.mig_specs or {}, int(memory) if memory.isdigit() else 0)
    eg = f", e.g. {example}" if example else ""
    plugin = ("the device plugin exits (single needs instances on every MIG GPU)"
              if node.mig_strategy == "single" else "the device plugin advertises nothing")
    return [ctx.finding(
        C.MIG_NO_INSTANCES,
        f"MIG enabled with no instances on {node.name} ({L.MIG_CONFIG}={config} applied): "
        f"no GPUs can be allocated; apply a layout with instances{eg}",
        f"MIG-enabled GPUs without instances give no resource: {plugin}, so the validator's "
        "plugin-validation finds no GPU and the ClusterPolicy stays notReady. Set "
        f"{L.MIG_CONFIG} to a layout with instances (the MIG pane's change), or all-disabled.")]
