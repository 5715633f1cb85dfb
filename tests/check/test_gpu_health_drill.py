"""The GPU-health drill end to end (issue 26): the ``gpu-health`` scenario plants one fault
per H100 node and ``gputui check`` must report each on its node, with its code and
severity, and leave the healthy control node of the same pool quiet; read through the
exporters (``check --demo``) and through a real Prometheus scraping the emulated exporters.

Also: the new GPU-health rules must not fire on what is normal (a MIG change that makes
GFD relabel ``gpu.count``, a reboot, time-slicing): those still exit 0.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gputui.sim.operator.hardware import gpu_uuid, node_suffix, pci_bus_id
from tests.helpers import free_port
from tests.metrics.prom import start_prometheus
from tests.sim.conftest import start_sim  # noqa: F401 - fixture

Run = Callable[..., subprocess.CompletedProcess[str]]

#: pool index -> (code, severity) of the fault planted there (gputui/sim/scenarios/gpu-health.yaml)
PLANTED = {0: ("gpu-count-dropped", "critical"), 1: ("xid-error", "critical"),
           2: ("pcie-replays", "warning"), 3: ("nvlink-errors", "warning"),
           4: ("gpu-throttled", "warning"), 5: ("gpu-memory-error", "critical")}
CONTROL = 6
#: emulated seconds after which every fault of gpu-health shows (its settleSeconds)
SETTLE = 20 * 60


def node(index: int) -> str:
    """The emulator's name for ``h100/<index>`` (hardware.node_suffix, as nodectl names it)."""
    return f"gke-prod-h100-pool-5e1d-{node_suffix(f'h100/{index}')}"


def loud(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Warning and critical findings per node."""
    found: dict[str, list[dict[str, Any]]] = {}
    for finding in report["findings"]:
        if finding["severity"] in ("warning", "critical"):
            found.setdefault(str(finding.get("node")), []).append(finding)
    return found


def assert_drills(report: dict[str, Any], path: str) -> None:
    """Each planted fault on its node with its code and severity; the control node quiet."""
    names = {n["name"] for n in report["nodes"]}
    assert {node(i) for i in range(7)} == names, "the scenario's node names changed"
    findings = loud(report)
    for index, (code, severity) in PLANTED.items():
        mine = [(f["code"], f["severity"]) for f in findings.get(node(index), [])]
        assert (code, severity) in mine, (path, index, code, findings.get(node(index)))
    assert node(CONTROL) not in findings, (path, findings.get(node(CONTROL)))
    # XID 95 masked by the XID 45 that followed it: still critical, and named
    xid = [f for f in findings[node(1)] if f["code"] == "xid-error"]
    assert any("95" in f["message"] for f in xid), xid
    dropped = next(f for f in findings[node(0)] if f["code"] == "gpu-count-dropped")
    assert "7" in dropped["message"] and "8" in dropped["message"], dropped


def test_check_demo_reports_every_planted_gpu_fault(gputui: Run) -> None:
    """Through exporter scrapes while the scenario plays (``check --demo``)."""
    result = gputui("check", "--json", "--demo", "--scenario", "gpu-health", timeout=300)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert_drills(report, "exporters")
    # the scrapes saw the lost GPU before the reboot: it is named
    dropped = next(f for f in loud(report)[node(0)] if f["code"] == "gpu-count-dropped")
    assert gpu_uuid(node(0), 3) in dropped["message"] or pci_bus_id(3) in dropped["message"], \
        dropped


@pytest.mark.prometheus
def test_check_through_prometheus_reports_every_planted_gpu_fault(
        gputui: Run, start_sim: Any, tmp_path: Path) -> None:  # noqa: F811 - fixture
    """A real Prometheus scrapes the emulated exporters (``http_sd_configs``) for the whole
    scenario; ``check --prometheus-url`` reads its history."""
    exporters = free_port()
    sim = start_sim("gpu-health", speed=20, exporters_port=exporters)
    server = start_prometheus(tmp_path, scrape_sd=f"http://127.0.0.1:{exporters}/sd")
    try:
        sim.wait_for(lambda: sim.emulated() >= SETTLE, SETTLE + 60, "the scenario settled")
        # Prometheus has the XID 95 the gauge showed for a second only through the count
        assert server.query('DCGM_EXP_XID_ERRORS_COUNT{xid="95"}[1h]') or \
            server.query('max_over_time(DCGM_EXP_XID_ERRORS_COUNT{xid="95"}[1h])')
        kubeconfig = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")
        result = gputui("check", "--json", "--kubeconfig", str(kubeconfig), "--prometheus-url",
                        server.url, timeout=300)
        assert result.returncode == 1, result.stderr
        assert_drills(json.loads(result.stdout), "prometheus")
    finally:
        server.stop()


NORMAL = """summary: normal operations on two pools - a MIG change, a reboot, time-slicing
namespace: gpu-operator
clusterPolicy:
  spec:
    mig: {strategy: single}
    devicePlugin:
      config: {name: time-slicing-config, default: ""}
devicePluginConfig:
  name: time-slicing-config
  data:
    tesla-t4: |
      version: v1
      sharing:
        timeSlicing:
          resources:
          - name: nvidia.com/gpu
            replicas: 4
nodePools:
  - {name: a100, prefix: gke-test-a100-pool-6d1f, count: 2, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
  - {name: h100, prefix: gke-test-h100-pool-7e2a, count: 3, gpu: H100-80GB, gpusPerNode: 8}
  - {name: t4, prefix: gke-test-t4-pool-8f3b, count: 2, gpu: T4, gpusPerNode: 4,
     deviceConfig: tesla-t4}
workloads:
  - {name: trainer, namespace: ml-training, pool: h100, count: 2, gpus: 8, labels: {app: trainer}}
timeline:
  - {at: 30s, action: mig-config, node: a100/0, config: all-1g.10gb}
  - {at: 1m, action: reboot, node: h100/2}
"""


def test_a_mig_change_a_reboot_and_time_slicing_stay_quiet(gputui: Run, tmp_path: Path) -> None:
    """GFD relabels ``gpu.count`` to 56 MIG devices on the MIG node (its sibling still says
    8), the rebooted node's GPUs come back, the T4s advertise 16 replicas: none of that
    is a GPU lost, a memory error or a throttle."""
    path = tmp_path / "normal-ops.yaml"
    path.write_text(NORMAL)
    result = gputui("check", "--json", "--demo", "--scenario", str(path), timeout=300)
    report = json.loads(result.stdout)
    assert result.returncode == 0, (result.stderr, loud(report))
