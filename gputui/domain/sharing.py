"""Device-plugin GPU sharing (§6): time-slicing / MPS replicas and what capacity to expect.

With sharing, a node advertises ``GPUs x replicas`` units (as ``nvidia.com/gpu`` or, when
renamed, ``nvidia.com/gpu.shared``), so "capacity below the GPUs the node has" must compare
against the replicated count, not the physical one.
"""

from __future__ import annotations

from collections.abc import Mapping

from gputui.domain import catalogue as C
from gputui.domain.findings_base import NodeContext
from gputui.domain.kube import to_int
from gputui.domain.labels import DEVICE_PLUGIN_CONFIG, GPU_REPLICAS, GPU_SHARING_STRATEGY
from gputui.domain.model import Finding


def sharing_of(labels: Mapping[str, str]) -> tuple[str, int]:
    """``(strategy, replicas)`` from GFD labels; ``("none", 1)`` when not shared.

    ``gpu.replicas=0`` marks MIG parents and the MIG-INVALID case; it reads as 1 here.
    """
    strategy = labels.get(GPU_SHARING_STRATEGY, "none") or "none"
    replicas = to_int(labels.get(GPU_REPLICAS, "1"), 1)
    return strategy, max(replicas, 1)


def sharing_config_names(configmaps: Mapping[tuple[str, str], Mapping[str, object]],
                         namespace: str | None, configmap: str | None) -> tuple[str, ...]:
    """The config names a node may ask for with ``nvidia.com/device-plugin.config``: the
    keys of the device plugin's ConfigMap (ClusterPolicy ``devicePlugin.config.name``)."""
    if not namespace or not configmap:
        return ()
    data = (configmaps.get((namespace, configmap)) or {}).get("data")
    return tuple(sorted(str(key) for key in data)) if isinstance(data, Mapping) else ()


def expected_units(gpu_count: int, replicas: int) -> int:
    """Schedulable units a healthy node advertises for ``gpu_count`` GPUs."""
    return gpu_count * max(replicas, 1)


def describe(strategy: str, replicas: int) -> str:
    """``time-slicing x4``, ``mps x2`` or ``none``."""
    return "none" if strategy == "none" or replicas <= 1 else f"{strategy} x{replicas}"


def sharing_config_missing(ctx: NodeContext) -> list[Finding]:
    """The node's ``nvidia.com/device-plugin.config`` names a key its ConfigMap lacks.

    config-manager (k8s-device-plugin ``cmd/config-manager/main.go``) then fails with
    "specified config X does not exist": ``config-manager-init`` crash-loops in every new
    device-plugin and GFD pod on the node, and a running one keeps its old config.
    """
    wanted = ctx.node.labels.get(DEVICE_PLUGIN_CONFIG)
    if not wanted or ctx.sharing_configs is None:
        return []
    configmap, keys = ctx.sharing_configs
    if wanted in keys:
        return []
    offered = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "") if keys else "no keys"
    return [ctx.finding(
        C.SHARING_CONFIG_MISSING,
        f"{DEVICE_PLUGIN_CONFIG}={wanted} on {ctx.node.name} names no key of ConfigMap "
        f"{configmap} (it has: {offered})",
        f"config-manager fails (\"specified config {wanted} does not exist\"): new "
        "device-plugin and GFD pods crash-loop in config-manager-init and the node offers no "
        f"GPUs after their next restart. Set the label to a key of {configmap}, remove it to "
        "use the default config, or add the key to the ConfigMap.", "device-plugin")]
