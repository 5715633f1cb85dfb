"""A sharing config's ``devices:`` field, as the device plugin really treats it.

A review asked gputui to expect ``devices x replicas + the rest`` when ``devices:`` names a
subset (8 GPUs, devices [0, 1] x4 -> 14), after k8s-device-plugin ``internal/rm/
device_map.go`` ``updateDeviceMapWithReplicas``. That function would, but the device plugin,
GFD and the MPS daemon all call ``DisableResourceNamingInConfig`` on the loaded config first
(``cmd/nvidia-device-plugin/main.go`` ``startPlugins``; ``api/config/v1/config.go``), and
``disableResoureRenaming`` (``api/config/v1/replicas.go``) sets every resource's
``Devices.All = true`` with the warning "Customizing the 'devices' field in
sharing.timeSlicing.resources is not yet supported in the config. Ignoring..." (since May
2022, commit ab92657a1). So every GPU is replicated: 8 x 4 = 32, and gputui's expectation
``gpu.count x replicas`` is upstream's. These tests pin that on both sides.
"""

from __future__ import annotations

from gputui.domain.model import Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sim.operator.sharing import parse_config
from tests.domain import factory as f

SUBSET = """version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      devices: [0, 1]
      replicas: 4
"""


def test_the_emulated_plugin_ignores_a_devices_subset_as_upstream_does() -> None:
    sharing = parse_config(SUBSET)
    assert (sharing.strategy, sharing.replicas) == ("time-slicing", 4)  # all GPUs, x4


def test_a_node_sharing_every_gpu_despite_a_devices_subset_is_healthy() -> None:
    labels = {"nvidia.com/gpu.count": "8", "nvidia.com/gpu.replicas": "4",
              "nvidia.com/gpu.sharing-strategy": "time-slicing",
              "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED"}
    node = f.node(labels=labels, gpus=32)
    snap = SnapshotBuilder().build(f.objects([node], f.healthy_pods()), f.T0)
    assert not [x for x in snap.findings if x.severity.rank >= Severity.WARNING.rank]
    short = f.node(labels=labels, gpus=14)  # what a subset would give: not upstream's count
    snap = SnapshotBuilder().build(f.objects([short], f.healthy_pods()), f.T0)
    assert [x.code for x in snap.findings if x.severity.rank >= Severity.WARNING.rank] == [
        "gpus-unavailable"]
