"""GFD's sharing labels as k8s-device-plugin ``internal/lm`` computes them.

``mig-strategy.go`` ``newGPULabelers``: a MIG-enabled GPU is labelled by
``NewGPUResourceLabelerWithoutSharing`` (nil config), so ``nvidia.com/gpu.replicas`` is 0 and
the sharing strategy ``none``; a full GPU of the same name overrides it. ``nvml.go``
``newSharingLabeler``: ``nvidia.com/mps.capable`` is false unless the config shares by MPS,
then true only when no device has MIG enabled (``isMPSCapable``).
"""

from __future__ import annotations

from gputui.sim.operator.hardware import model
from gputui.sim.operator.nodes import gfd_labels
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.sharing import NO_SHARING, Sharing

SLICED = Sharing("time-slicing", 4)
MPS = Sharing("mps", 4)


def _node(gpu: str, mig: dict[str, int] | None) -> NodeRun:
    run = NodeRun("n1", "p", model(gpu), 8, "5.15.0-1071-gke", False)
    for g in run.gpus:
        g.mig = None if mig is None else dict(mig)
    return run


def test_mig_parents_under_mixed_have_zero_replicas_and_no_sharing() -> None:
    labels = gfd_labels(_node("A100-80GB", {"1g.10gb": 7}), "mixed", SLICED, "580.82.07", 0)
    assert labels["nvidia.com/gpu.replicas"] == "0"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "none"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
    assert labels["nvidia.com/mig-1g.10gb.count"] == "56"


def test_full_gpus_keep_their_sharing() -> None:
    labels = gfd_labels(_node("A100-80GB", None), "mixed", SLICED, "580.82.07", 0)
    assert labels["nvidia.com/gpu.replicas"] == "4"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert gfd_labels(_node("H100-80GB", None), "none", NO_SHARING, "580.82.07", 0)[
        "nvidia.com/gpu.replicas"] == "1"


def test_mps_capable_follows_the_mps_config_and_mig() -> None:
    assert gfd_labels(_node("H100-80GB", None), "none", MPS, "580.82.07", 0)[
        "nvidia.com/mps.capable"] == "true"
    assert gfd_labels(_node("H100-80GB", None), "none", SLICED, "580.82.07", 0)[
        "nvidia.com/mps.capable"] == "false"
    assert gfd_labels(_node("A100-80GB", {"3g.40gb": 2}), "mixed", MPS, "580.82.07", 0)[
        "nvidia.com/mps.capable"] == "false"
