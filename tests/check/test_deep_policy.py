"""``check`` on a cluster whose ClusterPolicy nests 3,000 levels (issue 27): the policy is
refused alone and said unreadable, every node is still reported, no ``internal error``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from gputui.sim.cluster import EmulatedCluster
from tests.sources.helpers import deep_policy, node  # noqa: F401 - a fixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_check_names_the_refused_policy_and_keeps_the_nodes(
        deep_policy: None, gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    kubeconfig = api_only.write_kubeconfig(tmp_path / "kc")
    result = gputui("check", "--json", "--kubeconfig", str(kubeconfig))
    assert "internal error" not in result.stderr and "RecursionError" not in result.stderr
    report = json.loads(result.stdout)
    assert [n["name"] for n in report["nodes"]] == ["gpu-0"]
    assert [(u["resource"], u["reason"]) for u in report["unreadable"]] == [
        ("clusterpolicies", "refused")]
    assert result.returncode == 2  # the policy's state cannot be told: healthy is unknowable
    text = gputui("check", "--kubeconfig", str(kubeconfig))
    assert "cannot read clusterpolicies (an object nested too deep)" in text.stdout + text.stderr
