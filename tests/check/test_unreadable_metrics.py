"""Metrics that cannot be read are unknown, never fine (issue 26, section 3).

Against a kube-apiserver whose pod proxy cannot reach the exporters (400 "address not
allowed", or 503 for a dead or firewalled pod), ``check`` exited 0 with ``unreadable: []``
and "scrape of 0 node(s)". The emulated server answers every exporter scrape as such a
proxy does (``--faults status:CODE~/proxy/metrics``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.sources.helpers import NS, healthy_node, seed_gpu_nodes

Run = Callable[..., subprocess.CompletedProcess[str]]


def _check(gputui: Run, api_only: EmulatedCluster, tmp_path: Path,
           *extra: str) -> subprocess.CompletedProcess[str]:
    path = api_only.write_kubeconfig(tmp_path / "kc")
    return gputui("check", *extra, "--kubeconfig", str(path), "--namespace", NS)


@pytest.mark.parametrize(("code", "reason"), [
    (503, "503 from the pod proxy on 3 of 3 exporters"),
    (400, "400 from the pod proxy: address not allowed on 3 of 3 exporters")])
def test_every_exporter_failing_makes_gpu_health_unknown_and_exit_2(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path, code: int,
        reason: str) -> None:
    seed_gpu_nodes(api_only)
    api_only.inject(f"status:{code}~/proxy/metrics")
    result = _check(gputui, api_only, tmp_path, "--json")
    report = json.loads(result.stdout)
    gap = {"resource": "metrics", "reason": reason, "required": False,
           "hides": "GPU health (XIDs, missing GPUs, row remaps)"}
    assert gap in report["unreadable"], report["unreadable"]
    assert not [f for f in report["findings"] if f["severity"] != "info"]
    assert result.returncode == 2, result.stderr  # nothing else wrong: "healthy" unknowable
    text = _check(gputui, api_only, tmp_path)
    assert text.returncode == 2
    assert f"unknown: cannot read metrics ({reason}): GPU health" in text.stdout
    assert "no findings in what could be read: GPU health unknown (exit 2)" in text.stdout
    assert "metrics: cannot read (" in text.stdout.splitlines()[0]


def test_failing_exporters_beside_a_warning_keep_exit_1_and_still_say_it(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    seed_gpu_nodes(api_only)
    sick = healthy_node("gpu-3")
    sick["status"]["conditions"] = [{"type": "Ready", "status": "False"}]  # type: ignore[index]
    api_only.store.create("nodes", sick)
    api_only.inject("status:503~/proxy/metrics")
    result = _check(gputui, api_only, tmp_path, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 1, result.stderr
    assert {g["resource"]: g["reason"] for g in report["unreadable"]}["metrics"].startswith(
        "503 from the pod proxy on 3 of 3 exporters")


def test_a_cluster_without_dcgm_exporter_is_said_plainly_and_not_an_error(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    seed_gpu_nodes(api_only, exporters=False)
    result = _check(gputui, api_only, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert "metrics: none (no dcgm-exporter pods, no --prometheus-url)" in first
    assert "partial:" not in result.stdout and "unknown:" not in result.stdout


def test_the_handoff_summary_says_gpu_health_unknown(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    seed_gpu_nodes(api_only)
    api_only.inject("status:503~/proxy/metrics")
    result = _check(gputui, api_only, tmp_path, "--format", "markdown")
    assert result.returncode == 2, result.stderr
    assert "No findings in what could be read: GPU health **unknown**" in result.stdout
    assert "503 from the pod proxy on 3 of 3 exporters" in result.stdout
