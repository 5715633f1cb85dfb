"""The kubelet's GPU capacity when the device plugin is gone, as upstream writes it.

kubernetes ``pkg/kubelet/cm/devicemanager/types.go``: a stopped plugin's devices stay in
capacity for ``endpointStopGracePeriod`` (5 min) as unhealthy (allocatable 0), then
``GetCapacity`` drops the resource and ``pkg/kubelet/nodestatus/setters.go`` (``MachineInfo``)
sets its capacity to 0 ("Set capacity for removed resource to 0 on device removal"). After a
reboot the new kubelet restores the resource from its checkpoint with no devices
(``manager.go`` ``readCheckpoint``: capacity "will stay zero till the corresponding device
plugin re-registers"). Was: the emulator zeroed allocatable only and kept the capacity.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.sim.operator.nodectl import PLUGIN_STOP_GRACE_S
from tests.sim.conftest import Sim

ONE_NODE = """summary: one node
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 1, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 20m, action: kernel-update, node: h100/0, kernel: 5.15.0-1075-gke, breaksDriver: false}
"""
GPU = "nvidia.com/gpu"


def _start(start_sim: Any, tmp_path: Path) -> Sim:
    path = tmp_path / "one.yaml"
    path.write_text(ONE_NODE)
    sim: Sim = start_sim(str(path), speed=90)
    return sim


def test_a_rebooted_node_comes_back_with_gpu_capacity_zero(start_sim: Any,
                                                          tmp_path: Path) -> None:
    sim = _start(start_sim, tmp_path)
    node = sim.node("h100/0")
    first_up: list[dict[str, str]] = []

    def on_node(event: Any) -> None:
        status = event.obj.get("status") or {}
        if (status.get("nodeInfo") or {}).get("kernelVersion") != "5.15.0-1075-gke":
            return
        if not first_up:
            first_up.append({"capacity": status["capacity"].get(GPU),
                             "allocatable": status["allocatable"].get(GPU)})

    sim.cluster.store.watch("nodes", on_node)
    assert sim.core.read_node(node).status.capacity[GPU] == "8"
    sim.wait_for(lambda: first_up, 20 * 60 + 600, "the node back on its new kernel")
    assert first_up[0] == {"capacity": "0", "allocatable": "0"}
    sim.wait_for(lambda: sim.core.read_node(node).status.allocatable.get(GPU) == "8", 900,
                 "the device plugin registered again")


def test_capacity_drops_to_zero_five_minutes_after_the_plugin_stops(start_sim: Any,
                                                                    tmp_path: Path) -> None:
    """Watched as the kubelet writes it: allocatable 0 at once, capacity kept through the
    grace, then 0."""
    sim = _start(start_sim, tmp_path)
    node = sim.node("h100/0")
    seen: list[tuple[float, str | None, str | None]] = []  # (emulated, capacity, allocatable)

    def on_node(event: Any) -> None:
        status = event.obj.get("status") or {}
        row = (sim.emulated(), status["capacity"].get(GPU), status["allocatable"].get(GPU))
        if event.obj["metadata"]["name"] == node and (not seen or seen[-1][1:] != row[1:]):
            seen.append(row)

    sim.cluster.store.watch("nodes", on_node)
    # read before the patch: the emulated time runs on while it is sent, and the kubelet
    # may count the grace from a moment before a read taken after it
    stopped = sim.emulated()
    sim.core.patch_node(node, {"metadata": {"labels": {
        "nvidia.com/gpu.deploy.device-plugin": "false"}}})
    sim.wait_for(lambda: seen and seen[-1][1] == "0", PLUGIN_STOP_GRACE_S + 300,
                 "capacity 0 after the grace")
    states = [row[1:] for row in seen]
    assert ("8", "0") in states  # within the stop grace: kept, not allocatable
    assert states[-1] == ("0", "0")
    assert seen[-1][0] >= stopped + PLUGIN_STOP_GRACE_S - 1
