"""The row-remap drill: ``--faults remap:NODE:GPU`` makes the emulated dcgm-exporter report
``DCGM_FI_DEV_ROW_REMAP_FAILURE`` 1 for that GPU (dcgm-exporter's default counters,
``etc/default-counters.csv``), and ``gputui check`` names the node and GPU.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def remapped(tmp_path: Path) -> Iterator[tuple[EmulatedCluster, Path]]:
    cluster = EmulatedCluster("healthy", speed=50, faults="remap:h100/1:2").start()
    try:
        yield cluster, cluster.write_kubeconfig(tmp_path / "kubeconfig")
    finally:
        cluster.stop()


def test_an_injected_remap_failure_is_reported_on_its_node(
        gputui: Run, remapped: tuple[EmulatedCluster, Path]) -> None:
    cluster, kubeconfig = remapped
    node = cluster.operator.world.pool_members["h100"][1]
    result = gputui("check", "--json", "--kubeconfig", str(kubeconfig), timeout=300)
    assert result.returncode == 1, result.stderr
    found = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "row-remap-failure"]
    assert [(f["node"], f["severity"]) for f in found] == [(node, "critical")]
    assert "GPU 2" in found[0]["message"]
