"""The ``gputui check --json`` object (ARCHITECTURE.md, "CLI contract").

Scripts and runbooks parse this, so the keys and value sets are fixed; add keys only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gputui.domain.join_model import STAGE_KEYS
from gputui.domain.model import ClusterSnapshot, Finding, NodeJoin, NodeView, PoolJoins
from gputui.domain.readgaps import METRICS, health_unknowable

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
        "join": _join_json(node.join),
    }


def _join_json(join: NodeJoin | None) -> dict[str, Any] | None:
    """The node's time to GPU: state, total seconds, its stage (joining), each stage's share."""
    if join is None:
        return None
    return {"state": join.state, "seconds": _seconds(join.total), "stage": join.stage or None,
            "observed": join.observed,
            "stages": {key: _seconds(share) for key, share
                       in zip(STAGE_KEYS, join.stage_seconds(), strict=True)}}


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {"code": finding.code, "severity": finding.severity.value, "node": finding.node,
            "message": finding.message, "hint": finding.hint, "nodes": list(finding.nodes)}


def _seconds(value: float | None) -> int | None:
    return None if value is None else round(value)


def _pool_json(pool: PoolJoins, now: float) -> dict[str, Any]:
    """One pool's time to GPU: figures over the window's timed joins, seconds."""
    return {
        "pool": pool.pool, "count": pool.count, "p50_s": _seconds(pool.p50),
        "p90_s": _seconds(pool.p90), "max_s": _seconds(pool.max),
        "slowest_stage": pool.slowest_stage or None,
        "limit_s": _seconds(pool.limit), "unknown": pool.unknown,
        "stragglers": [{"node": s.node, "seconds": _seconds(s.seconds), "stage": s.stage,
                        "joining": s.joining} for s in pool.stragglers],
        "joining": [{"node": j.node, "stage": j.stage, "elapsed_s": _seconds(now - j.since)}
                    for j in pool.joining],
    }


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
        "joins": [_pool_json(pool, snapshot.generated_at) for pool in snapshot.joins],
    }


def gpu_health_unknown(snapshot: ClusterSnapshot) -> bool:
    """Whether the metrics could be read for no GPU node (every exporter scrape or query
    failed, or the pod proxy is refused): then no GPU's health is known."""
    return METRICS in snapshot.unreadable and bool(snapshot.nodes) and all(
        view.health_unknown for view in snapshot.nodes.values())


def exit_code(snapshot: ClusterSnapshot) -> int:
    """``gputui check`` exit status: 2 when a required resource could not be read ("healthy"
    cannot be told, whatever the findings say: the report is incomplete), else 1 when any
    finding is warning or worse, else 2 when no GPU's health could be read (a warning
    already makes the cluster unhealthy, so it is 1 then), else 0. Other optional sources
    (events, configs, some exporters) missing only lose findings that come on top, so they
    keep the exit status."""
    if health_unknowable(snapshot.unreadable):
        return EXIT_UNKNOWABLE
    if any(f.severity.rank >= 2 for f in snapshot.findings):
        return 1
    return EXIT_UNKNOWABLE if gpu_health_unknown(snapshot) else 0
