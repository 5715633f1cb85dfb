"""The ``gputui check --json`` object (ARCHITECTURE.md, "CLI contract").

Scripts and runbooks parse this, so the keys and value sets are fixed; add keys only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gputui.domain.model import ClusterSnapshot, Finding, NodeView
from gputui.domain.readgaps import health_unknowable

#: exit status when what could not be read makes "healthy" unknowable (as "could not run")
EXIT_UNKNOWABLE = 2


def rfc3339(epoch: float) -> str:
    """Epoch seconds as RFC 3339 in UTC with a ``Z`` suffix, second precision."""
    moment = datetime.fromtimestamp(epoch, tz=UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def _node_json(node: NodeView) -> dict[str, Any]:
    return {
        "name": node.name,
        "ready": node.ready,
        "cordoned": node.cordoned,
        "gpu_product": node.product,
        "gpus": {"count": node.gpu_count, "capacity": node.resources.capacity,
                 "allocatable": node.resources.allocatable},
        "driver_version": node.driver_version,
        "kernel": node.kernel,
        "upgrade_state": node.upgrade_state,
        "mig": {"config": node.mig_config, "state": node.mig_state},
        "pipeline": [{"operand": stage.operand, "status": stage.status.value,
                      "detail": stage.detail} for stage in node.pipeline.stages],
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {"code": finding.code, "severity": finding.severity.value, "node": finding.node,
            "message": finding.message, "hint": finding.hint, "nodes": list(finding.nodes)}


def to_check_json(snapshot: ClusterSnapshot) -> dict[str, Any]:
    """The one object ``gputui check --json`` prints, built from a snapshot."""
    policy = snapshot.cluster_policy
    return {
        "context": snapshot.context,
        "generated_at": rfc3339(snapshot.generated_at),
        "cluster_policy": {"name": policy.name, "state": policy.state,
                           "not_ready_states": list(policy.not_ready_states)},
        "nodes": [_node_json(node) for node in snapshot.nodes.values()],
        "findings": [_finding_json(finding) for finding in snapshot.findings],
        "unreadable": [{"resource": gap.resource, "reason": gap.reason, "hides": gap.hides,
                        "required": gap.required} for gap in snapshot.gaps],
    }


def exit_code(snapshot: ClusterSnapshot) -> int:
    """``gputui check`` exit status: 2 when a required resource could not be read ("healthy"
    cannot be told, whatever the findings say: the report is incomplete), else 1 when any
    finding is warning or worse, else 0. Optional sources (events, configs, metrics) missing
    only lose findings that come on top, so they keep the exit status."""
    if health_unknowable(snapshot.unreadable):
        return EXIT_UNKNOWABLE
    return 1 if any(f.severity.rank >= 2 for f in snapshot.findings) else 0
