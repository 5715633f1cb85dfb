"""MIG GPU instances as dcgm-exporter sees them: their ``GPU_I_ID``s and the pods using them.

On a MIG-enabled GPU the exporter (``--devices f``, the default) watches each GPU instance
instead of the GPU, and the kubelet's pod-resources API tells it which pod holds which
instance. The emulator has no device IDs, so it hands instances out the way the device
plugin would: a pod keeps the instances it was given for as long as it runs, and a new pod
takes free instances of its profile (``nvidia.com/mig-<profile>`` under the ``mixed``
strategy, ``nvidia.com/gpu`` under ``single``; under ``none`` pods get whole GPUs, so no
instance carries a pod). GPU instance IDs follow the placements ``nvidia-smi mig -lgi``
shows on 7-slice parts (7g: 0, 4g/3g from 1, 2g from 3, 1g from 7; a 1g profile with
doubled memory from 3) and their 4-slice equivalents; exact placement rules are not emulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.hardware import GpuModel
from gputui.sim.operator.runtime import Gpu

_FIRST_ID_7 = {"7g": 0, "4g": 1, "3g": 1, "2g": 3, "1g": 7}
_FIRST_ID_4 = {"4g": 0, "2g": 1, "1g": 3}


@dataclass(frozen=True)
class Instance:
    """One GPU instance: parent GPU index, GPU instance ID and profile (``1g.10gb``)."""

    gpu: int
    gi: int
    profile: str


def _slices(profile: str) -> int:
    return int(profile.split("g.")[0])


def instances(model: GpuModel, gpu: Gpu) -> list[Instance]:
    """The GPU's instances under its applied layout, larger profiles placed first."""
    if not gpu.mig:
        return []
    table = _FIRST_ID_7 if model.slices >= 7 else _FIRST_ID_4
    used: set[int] = set()
    out: list[Instance] = []
    for profile in sorted(gpu.mig, key=lambda p: (-_slices(p), p)):
        gi = table.get(profile.split(".")[0], 0)
        if _slices(profile) == 1 and "+" not in profile \
                and model.mig_profiles.get(profile, 0) < model.slices:
            gi = table["2g"]  # a 1g profile with more memory fits fewer times
        for _ in range(gpu.mig[profile]):
            while gi in used:
                gi += 1
            used.add(gi)
            out.append(Instance(gpu.index, gi, profile))
    return out


def _wants(pod: Any, inst: Instance, strategy: str) -> bool:
    resource = str(pod.spec.resource)
    if strategy == "mixed":
        return resource == K.RESOURCE_MIG_PREFIX + inst.profile
    return strategy == "single" and resource == K.RESOURCE_GPU


class Assignments:
    """Which running pod holds which instance, per node, stable while the pod runs."""

    def __init__(self) -> None:
        self._held: dict[str, dict[Instance, Any]] = {}

    def users(self, node: str, present: list[Instance], running: list[Any],
              strategy: str) -> dict[Instance, Any]:
        """Instance -> the pod (a workload record) using it; new pods take free instances."""
        alive = {p.name for p in running}
        held = {i: p for i, p in self._held.get(node, {}).items()
                if i in set(present) and p.name in alive}
        holding = {p.name for p in held.values()}
        for pod in sorted(running, key=lambda p: (p.started, p.name)):
            if pod.name in holding:
                continue
            free = [i for i in present if i not in held and _wants(pod, i, strategy)]
            if len(free) >= int(pod.spec.gpus):
                for inst in free[: int(pod.spec.gpus)]:
                    held[inst] = pod
        self._held[node] = held
        return held
