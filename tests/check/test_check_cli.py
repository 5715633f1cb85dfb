"""``gputui check`` through the real CLI: exit codes 0/1/2, one-line errors, the JSON shape."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from gputui.sim.cluster import EmulatedCluster
from tests.helpers import free_port
from tests.sources.helpers import cluster_policy, node

Run = Callable[..., subprocess.CompletedProcess[str]]


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gputui: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_missing_kubeconfig(gputui: Run, tmp_path: Path) -> None:
    assert_one_line_error(gputui("check", "--kubeconfig", str(tmp_path / "nope")),
                          "kubeconfig not found")


def test_no_kubeconfig_anywhere(gputui: Run) -> None:
    assert_one_line_error(gputui("check", "--json"), "no kubeconfig found")


def test_bad_yaml(gputui: Run, tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text("clusters: [\n  - {name: x\n")
    assert_one_line_error(gputui("check", "--kubeconfig", str(path)), "not valid YAML")


def test_unknown_context(gputui: Run, tmp_path: Path) -> None:
    path = EmulatedCluster(run_controllers=False).write_kubeconfig(tmp_path / "kc")
    assert_one_line_error(gputui("check", "--kubeconfig", str(path), "--context", "prod"),
                          "context 'prod' not found", "gputui-demo")


def test_unreachable_server(gputui: Run, tmp_path: Path) -> None:
    port = free_port()
    path = EmulatedCluster(run_controllers=False, port=port).write_kubeconfig(tmp_path / "kc")
    result = gputui("check", "--json", env={"KUBECONFIG": str(path)})
    assert_one_line_error(result, f"127.0.0.1:{port}", "connection refused")


def test_unknown_scenario(gputui: Run) -> None:
    assert_one_line_error(gputui("check", "--demo", "--scenario", "no-such"),
                          "unknown scenario")


def test_json_against_a_cluster(gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    """A cluster without a ClusterPolicy: the contract object and exit code 1."""
    api_only.store.create("nodes", node("gpu-0"))
    path = api_only.write_kubeconfig(tmp_path / "kc")
    result = gputui("check", "--json", "--kubeconfig", str(path))
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert set(report) >= {"context", "generated_at", "cluster_policy", "nodes", "findings"}
    assert report["context"] == "gputui-demo"
    assert report["cluster_policy"]["state"] == "missing"
    assert [n["name"] for n in report["nodes"]] == ["gpu-0"]
    codes = {f["code"] for f in report["findings"]}
    assert "cluster-policy-missing" in codes


def test_table_without_tty_and_context_flag(gputui: Run, api_only: EmulatedCluster,
                                            tmp_path: Path) -> None:
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    data = api_only.kubeconfig("other")
    data["current-context"] = "missing-one"
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump(data))
    result = gputui("check", "--kubeconfig", str(path), "--context", "other")
    assert result.returncode == 0, result.stderr
    header, *rest = result.stdout.splitlines()
    assert header.startswith("context other  cluster-policy: ready")
    assert rest == ["no findings"]


@pytest.mark.parametrize("flag", ["--json", None])
def test_forbidden_part_is_reported(gputui: Run, forbidden_paths: set[str],
                                    api_only: EmulatedCluster, tmp_path: Path,
                                    flag: str | None) -> None:
    forbidden_paths.add("/api/v1/events")
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    path = api_only.write_kubeconfig(tmp_path / "kc")
    result = gputui("check", *([flag] if flag else []), "--kubeconfig", str(path))
    assert result.returncode in (0, 1), result.stderr
    if flag:
        json.loads(result.stdout)
    else:
        assert "forbidden: events" in result.stdout.splitlines()[0]


def test_forbidden_pods_make_health_unknowable_exit_2(gputui: Run, api_only: EmulatedCluster,
                                                      tmp_path: Path) -> None:
    """A viewer who may read nodes but not pods (issue 18, 10c): ``unreadable`` names pods
    and what they hide, the rows are not "healthy", and the exit code says "cannot tell"."""
    healthy = node("gpu-0")  # Ready, every GPU allocatable: nothing wrong in the Node itself
    healthy["status"].update(allocatable={"nvidia.com/gpu": "8"},
                             conditions=[{"type": "Ready", "status": "True"}])
    api_only.store.create("nodes", healthy)
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    api_only.set_deny("list:pods,watch:pods,get:pods")
    path = api_only.write_kubeconfig(tmp_path / "kc")
    result = gputui("check", "--json", "--kubeconfig", str(path))
    assert result.returncode == 2, result.stderr
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert report["unreadable"] == [{
        "resource": "pods", "reason": "forbidden", "required": True,
        "hides": "operand pipelines, GPU pods and the findings on them"}]
    stages = report["nodes"][0]["pipeline"]
    assert stages and {s["status"] for s in stages} == {"unknown"}
    text = gputui("check", "--kubeconfig", str(path))
    assert text.returncode == 2
    lines = text.stdout.splitlines()
    assert lines[1] == ("unknown: cannot read pods (403): operand pipelines, GPU pods and "
                        "the findings on them unknown")
    assert lines[-1].startswith("no findings in what could be read: health unknown")


def test_forbidden_cluster_policy_is_unknown_and_only_optional_gaps_keep_exit_0(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    api_only.set_deny("list:clusterpolicies.nvidia.com")
    path = api_only.write_kubeconfig(tmp_path / "kc")
    denied = gputui("check", "--json", "--kubeconfig", str(path), "--namespace",
                    "gpu-operator")
    report = json.loads(denied.stdout)
    assert denied.returncode == 2 and report["cluster_policy"]["state"] == "unknown"
    assert "cluster-policy-missing" not in {f["code"] for f in report["findings"]}
    api_only.set_deny("list:events,list:configmaps,list:poddisruptionbudgets.policy")
    optional = gputui("check", "--json", "--kubeconfig", str(path))
    gaps = json.loads(optional.stdout)["unreadable"]
    # events are read twice: the nodes' upgrade events and, in the operator namespace, the
    # DaemonSet controller's FailedCreate (evidence for upgrade-blocked): both are gaps; the
    # budgets only name which one held a drain
    assert {(g["resource"], g["required"]) for g in gaps} == {
        ("events", False), ("daemonset-events", False), ("configmaps", False),
        ("poddisruptionbudgets", False)}
    assert optional.returncode in (0, 1), optional.stderr


def test_refused_exporter_scrapes_report_metrics_unknown_keep_exit(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    """No ``pods/proxy``: every dcgm-exporter scrape answers 403, so XIDs are unknown (an
    optional source: the exit status stays what the findings say)."""
    from tests.sources.helpers import pod

    api_only.store.create("nodes", node("gpu-0"))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy("gpu-operator"))
    api_only.store.create("pods", pod("gpu-operator", "nvidia-dcgm-exporter-x", "gpu-0",
                                      labels={"app": "nvidia-dcgm-exporter"}))
    api_only.set_deny("get:pods/proxy,create:pods/proxy")
    path = api_only.write_kubeconfig(tmp_path / "kc")
    result = gputui("check", "--json", "--kubeconfig", str(path))
    report = json.loads(result.stdout)
    assert {"resource": "metrics", "reason": "forbidden", "required": False,
            "hides": "GPU health (XIDs, missing GPUs, row remaps)"} in report["unreadable"]
    assert result.returncode == 1, result.stderr  # the node's own findings, not 2
