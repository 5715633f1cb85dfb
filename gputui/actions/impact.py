"""What a node action does to the fleet, computed from the snapshot before anything is sent.

The confirmation dialog shows these lines so the operator sees consequences, not just the
patch: the GPU pods that will go and whose they are, how many nodes become unavailable
against the upgrade policy's ``maxUnavailable``, and the findings that make it risky (the
last schedulable node of a pool, a node in the middle of a driver upgrade).
"""

from __future__ import annotations

from collections.abc import Sequence

from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.domain.upgrade_state import holds_slot


def nodes_of(snapshot: ClusterSnapshot, targets: Sequence[str]) -> list[NodeView]:
    """The targets the snapshot knows, in the given order."""
    return [snapshot.nodes[name] for name in targets if name in snapshot.nodes]


def gpu_pod_lines(snapshot: ClusterSnapshot, targets: Sequence[str], verb: str) -> tuple[str, ...]:
    """``"2 GPU pods evicted: ml/train-0 (8 GPUs) on gpu-3 ..."``; whose = the namespace
    and the workload's ``app`` label when it has one."""
    lines: list[str] = []
    for node in nodes_of(snapshot, targets):
        for pod in node.gpu_pods:
            if pod.phase in ("Succeeded", "Failed"):
                continue
            owner = pod.labels.get("app") or pod.labels.get("app.kubernetes.io/name")
            whose = f", app {owner}" if owner else ""
            lines.append(f"{pod.namespace}/{pod.name} on {node.name} "
                         f"({pod.gpus} GPU{'s' if pod.gpus != 1 else ''}{whose})")
    if not lines:
        return (f"no GPU pods {verb}",)
    return (f"{len(lines)} GPU pod{'s' if len(lines) != 1 else ''} {verb}:",
            *(f"  {line}" for line in lines))


def unavailable_line(snapshot: ClusterSnapshot, targets: Sequence[str]) -> str | None:
    """Nodes made unavailable by cordoning ``targets``, against ``maxUnavailable``."""
    newly = [n for n in nodes_of(snapshot, targets) if n.ready and not n.cordoned]
    if not newly:
        return None
    upgrade = snapshot.upgrade
    if upgrade.policy is None or not upgrade.total:
        return f"{len(newly)} node{'s' if len(newly) != 1 else ''} made unschedulable"
    after = upgrade.unavailable + len(newly)
    line = (f"{len(newly)} node{'s' if len(newly) != 1 else ''} made unavailable: "
            f"{after} of {upgrade.total} unavailable, maxUnavailable {upgrade.max_unavailable}")
    if after >= upgrade.max_unavailable:
        line += " (the driver upgrade can start no new node until some return)"
    return line


def risk_warnings(snapshot: ClusterSnapshot, targets: Sequence[str]) -> tuple[str, ...]:
    """The last schedulable node of a pool, and nodes already in an upgrade."""
    warnings: list[str] = []
    chosen = set(targets)
    pools: dict[str, list[NodeView]] = {}
    for node in snapshot.nodes.values():
        pools.setdefault(node.pool or node.product or "", []).append(node)
    for pool, members in sorted(pools.items()):
        healthy = [n for n in members if n.ready and not n.cordoned]
        if healthy and all(n.name in chosen for n in healthy):
            label = f"pool {pool}" if pool else "the cluster"
            warnings.append(f"{', '.join(n.name for n in healthy)}: the last schedulable "
                            f"node{'s' if len(healthy) != 1 else ''} of {label}")
    for node in nodes_of(snapshot, targets):
        if holds_slot(node.upgrade_state):
            warnings.append(f"{node.name} is in a driver upgrade ({node.upgrade_state}): the "
                            "upgrade controller also cordons and uncordons it")
    return tuple(warnings)
