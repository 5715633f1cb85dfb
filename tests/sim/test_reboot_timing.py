"""How long a reboot and a driver build take in emulated time, as upstream's limits say.

Reboot: kube-controller-manager's node lifecycle controller
(``pkg/controller/nodelifecycle/node_lifecycle_controller.go`` ``tryUpdateNodeHealth``) sets
Ready to ``Unknown`` ("Kubelet stopped posting node status.") once the kubelet has been silent
for ``--node-monitor-grace-period`` (50 s since Kubernetes 1.32, PR #126287); the kubelet posts Ready again when the machine is
up. Driver: gpu-operator ``assets/state-driver/0500_daemonset.yaml`` gives nvidia-driver-ctr a
startupProbe with ``initialDelaySeconds: 60``, so the driver pod is never Ready sooner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.sim.operator import reboot
from tests.sim.conftest import Sim

ONE_REBOOT = """summary: one node reboots into a new kernel
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 1, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 20m, action: kernel-update, node: h100/0, kernel: 5.15.0-1075-gke, breaksDriver: false}
"""
#: emulated seconds to the reboot: 13 s of real time at 90x for the cluster to start and the
#: watch to be in place first, even on a loaded machine
REBOOT_AT = 20 * 60


def _start(start_sim: Any, tmp_path: Path) -> tuple[Sim, list[tuple[float, str, str]]]:
    path = tmp_path / "reboot.yaml"
    path.write_text(ONE_REBOOT)
    sim: Sim = start_sim(str(path), speed=90)
    seen: list[tuple[float, str, str]] = []   # (emulated time, Ready status, kernel)

    def on_node(event: Any) -> None:
        status = event.obj.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        row = (sim.emulated(), str(ready.get("status")),
               str((status.get("nodeInfo") or {}).get("kernelVersion")))
        if not seen or seen[-1][1:] != row[1:]:
            seen.append(row)

    sim.cluster.store.watch("nodes", on_node)
    return sim, seen


def _ready(sim: Sim, node: str) -> Any:
    return next(c for c in sim.core.read_node(node).status.conditions if c.type == "Ready")


def test_a_reboot_makes_the_node_unknown_after_the_grace_then_ready(start_sim: Any,
                                                                    tmp_path: Path) -> None:
    sim, seen = _start(start_sim, tmp_path)
    node = sim.node("h100/0")
    assert sim.emulated() < REBOOT_AT and _ready(sim, node).status == "True"
    sim.wait_for(lambda: any(s == "Unknown" for _, s, _ in seen), REBOOT_AT + 300,
                 "Ready Unknown")
    cond = _ready(sim, node)
    assert (cond.reason, cond.message) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
    sim.wait_for(lambda: seen[-1][1:] == ("True", "5.15.0-1075-gke"), 600, "Ready on the new kernel")
    went, back = next(t for t, s, _ in seen if s == "Unknown"), seen[-1][0]
    # silent for the grace after the reboot, then Unknown until the machine is up.
    # Both bounds count from the reboot: on a loaded machine a controller writes late, never
    # early, so a late Unknown must not shorten what is asked of the boot
    assert reboot.NODE_MONITOR_GRACE_S == 50  # the emulated cluster is 1.34 (was: 40 s)
    assert went >= REBOOT_AT + reboot.NODE_MONITOR_GRACE_S - 1
    assert back >= REBOOT_AT + reboot.BOOT_S - 2
    assert [s for _, s, _ in seen] == ["Unknown", "True"]


def test_the_driver_container_is_ready_no_sooner_than_its_startup_probe(start_sim: Any,
                                                                       tmp_path: Path) -> None:
    """Watched as the kubelet writes it: the restarted nvidia-driver-ctr runs, then is Ready."""
    sim, _ = _start(start_sim, tmp_path)
    node = sim.node("h100/0")
    moments: dict[str, float] = {}

    def on_pod(event: Any) -> None:
        pod = event.obj
        if (pod.get("spec") or {}).get("nodeName") != node:
            return
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            if status["name"] != "nvidia-driver-ctr" or not status.get("restartCount"):
                continue
            if "running" in (status.get("state") or {}):
                moments.setdefault("running", sim.emulated())
            if status.get("ready"):
                moments.setdefault("ready", sim.emulated())

    sim.cluster.store.watch("pods", on_pod)
    sim.wait_for(lambda: "ready" in moments, REBOOT_AT + 900,
                 "driver Ready again after the reboot")
    assert moments["ready"] - moments["running"] >= 60 - 1
