"""Device-plugin GPU sharing (§6): time-slicing / MPS replicas and what capacity to expect.

With sharing, a node advertises ``GPUs x replicas`` units (as ``nvidia.com/gpu`` or, when
renamed, ``nvidia.com/gpu.shared``), so "capacity below the GPUs the node has" must compare
against the replicated count, not the physical one.
"""

from __future__ import annotations

from collections.abc import Mapping

from gputui.domain.kube import to_int
from gputui.domain.labels import GPU_REPLICAS, GPU_SHARING_STRATEGY


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
