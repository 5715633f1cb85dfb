"""``to_check_json`` against the CLI contract of ARCHITECTURE.md."""

from __future__ import annotations

import json
import re
from typing import Any

from gputui.domain import EMPTY_SNAPSHOT, exit_code, to_check_json
from gputui.domain.catalogue import CATALOGUE
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f

STATUSES = {"ready", "progressing", "failed", "paused", "disabled", "absent", "unknown"}
SEVERITIES = {"critical", "warning", "info"}
CP_STATES = {"ready", "notReady", "ignored", "missing", "unknown"}
REASONS = {"forbidden", "not-served"}
CODES = set(CATALOGUE)
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


JOIN_STATES = {"done", "joining", "unknown"}
STAGES = ("driver", "toolkit", "validations", "device-plugin")


def check_pool(pool: dict[str, Any]) -> None:
    """One pool's time-to-GPU figures (``joins``)."""
    assert set(pool) == {"pool", "count", "p50_s", "p90_s", "max_s", "slowest_stage",
                         "limit_s", "unknown", "stragglers", "joining"}
    assert isinstance(pool["pool"], str) and isinstance(pool["count"], int)
    for key in ("p50_s", "p90_s", "max_s"):
        assert (pool[key] is None) == (pool["count"] == 0)
    assert pool["slowest_stage"] in (None, *STAGES)
    for straggler in pool["stragglers"]:
        assert set(straggler) == {"node", "seconds", "stage", "joining"}
    for joining in pool["joining"]:
        assert set(joining) == {"node", "stage", "elapsed_s"} and joining["stage"] in STAGES


def check_schema(doc: dict[str, Any]) -> None:
    """Assert the exact shape of the contract object (keys, types, value sets)."""
    assert set(doc) == {"context", "generated_at", "cluster_policy", "nodes", "findings",
                        "unreadable", "joins"}
    for pool in doc["joins"]:
        check_pool(pool)
    for gap in doc["unreadable"]:
        assert set(gap) == {"resource", "reason", "hides", "required"}
        assert gap["reason"] in REASONS and gap["hides"] and isinstance(gap["required"], bool)
    assert isinstance(doc["context"], str) and RFC3339.match(doc["generated_at"])
    cp = doc["cluster_policy"]
    assert set(cp) == {"name", "state", "not_ready_states"} and cp["state"] in CP_STATES
    assert all(isinstance(s, str) for s in cp["not_ready_states"])
    for node in doc["nodes"]:
        assert set(node) == {"name", "ready", "cordoned", "gpu_product", "gpus",
                             "driver_version", "kernel", "upgrade_state", "mig", "pipeline",
                             "join"}
        if node["join"] is not None:
            assert set(node["join"]) == {"state", "seconds", "stage", "observed", "stages"}
            assert node["join"]["state"] in JOIN_STATES
            assert set(node["join"]["stages"]) == set(STAGES)
        assert isinstance(node["ready"], bool) and isinstance(node["cordoned"], bool)
        assert set(node["gpus"]) == {"count", "capacity", "allocatable"}
        assert all(isinstance(v, int) for v in node["gpus"].values())
        assert set(node["mig"]) == {"config", "state"}
        for key in ("gpu_product", "driver_version", "kernel", "upgrade_state"):
            assert isinstance(node[key], str)
        for stage in node["pipeline"]:
            assert set(stage) == {"operand", "status", "detail"}
            assert stage["status"] in STATUSES
    for finding in doc["findings"]:
        assert set(finding) == {"code", "severity", "node", "message", "hint", "nodes"}
        assert all(isinstance(name, str) for name in finding["nodes"])
        assert finding["code"] in CODES and finding["severity"] in SEVERITIES
        assert finding["node"] is None or isinstance(finding["node"], str)
        assert finding["message"] and finding["hint"]
    json.dumps(doc)  # serialisable as is


def test_empty_snapshot_matches_contract() -> None:
    doc = to_check_json(EMPTY_SNAPSHOT)
    check_schema(doc)
    assert doc["cluster_policy"]["state"] == "missing"


def test_sick_cluster_matches_contract_and_exits_1() -> None:
    pods = [p for p in f.healthy_pods() if p["metadata"]["labels"]["app"]
            != "nvidia-driver-daemonset"] + [f.load("pod-driver-init-crashloop.json")]
    nodes = [f.node(allocatable=0), f.node("b", ready=False, labels={
        "nvidia.com/mig.config.state": "failed"})]
    snap = SnapshotBuilder().build(f.objects(nodes, pods + f.healthy_pods("b")), f.T0)
    doc = to_check_json(snap)
    check_schema(doc)
    assert doc["generated_at"] == "2026-11-29T10:00:00Z"
    assert [n["name"] for n in doc["nodes"]] == ["b", f.NODE]
    first = doc["nodes"][1]
    assert first["gpus"] == {"count": 8, "capacity": 8, "allocatable": 0}
    assert first["pipeline"][0] == {"operand": "driver", "status": "failed",
                                    "detail": "Init:CrashLoopBackOff in k8s-driver-manager, "
                                              "14 restarts"}
    assert first["mig"] == {"config": "all-disabled", "state": "success"}
    assert doc["findings"][0]["severity"] == "critical"
    assert exit_code(snap) == 1


def test_healthy_cluster_exits_0() -> None:
    snap = SnapshotBuilder().build(f.objects([f.node()], f.healthy_pods()), f.T0)
    check_schema(to_check_json(snap))
    assert exit_code(snap) == 0


def test_the_readme_documents_every_key_and_value_of_the_contract() -> None:
    """README's ``gputui check --json`` section names every key ``check_schema`` holds the
    object to, and every value of its closed sets (``unknown`` status, ``unreadable``
    reasons, a finding's ``nodes``)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("### `gputui check --json`")
    section = readme[start:readme.index("\n### ", start + 1)]
    keys = {"context", "generated_at", "cluster_policy", "name", "state", "not_ready_states",
            "nodes", "ready", "cordoned", "gpu_product", "gpus", "count", "capacity",
            "allocatable", "driver_version", "kernel", "upgrade_state", "mig", "config",
            "pipeline", "operand", "status", "detail", "findings", "code", "severity", "node",
            "message", "hint", "unreadable", "resource", "reason", "hides", "required"}
    missing = {k for k in keys if f'"{k}"' not in section}
    assert not missing, missing
    values = STATUSES | SEVERITIES | CP_STATES | REASONS
    assert not {v for v in values if not re.search(rf"\b{re.escape(v)}\b", section)}
