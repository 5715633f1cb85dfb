"""The snapshot builder: :class:`ClusterObjects` in, one frozen :class:`ClusterSnapshot` out.

Cost follows change: a node's view is rebuilt only when the cache says it changed, when
cluster-wide inputs that shape every node changed (ClusterPolicy, operand DaemonSets), when
its last upgrade event changed, or when a time threshold it was waiting on has passed. Pods
are grouped by ``spec.nodeName`` once per build and parsed only for rebuilt nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from gputui.domain import kube
from gputui.domain.daemonsets import driver_generations, summarize_daemonsets
from gputui.domain.findings_cluster import (
    cluster_policy_findings,
    daemonset_findings,
    upgrade_blocked,
    xid_node_findings,
)
from gputui.domain.inputs import ClusterObjects, JsonDict
from gputui.domain.labels import MIG_CONFIG
from gputui.domain.mig import MigConfigCache, config_source, node_mig_view
from gputui.domain.model import (
    ClusterPolicyView,
    ClusterSnapshot,
    DaemonSetSummary,
    Finding,
    MigView,
    NodeMigView,
    NodeView,
    SnapshotCounts,
    UpgradeEvent,
    UpgradePolicy,
)
from gputui.domain.node_build import NodeInputs, build_node
from gputui.domain.policy import driver_policy, read_cluster_policy
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, ThresholdsLike
from gputui.domain.upgrade import build_upgrade_view, last_events


@dataclass(frozen=True, slots=True)
class _Entry:
    view: NodeView
    recheck_at: float | None
    event: UpgradeEvent | None


@dataclass(frozen=True, slots=True)
class _Shared:
    """Cluster-wide inputs that shape every node; a change rebuilds all nodes."""

    policy_present: bool
    disabled: tuple[str, ...]
    with_daemonset: frozenset[str]
    upgrade_policy: UpgradePolicy | None
    namespace: str | None
    driver_generations: tuple[tuple[str, int], ...] = ()
    mig_config_name: str | None = None


def _group_pods(pods: Mapping[tuple[str, str], JsonDict]) -> dict[str, list[JsonDict]]:
    """Pods by node: ``spec.nodeName``, or the hostname selector that pins the CUDA validator."""
    grouped: dict[str, list[JsonDict]] = {}
    for pod in pods.values():
        spec = pod.get("spec") or {}
        node = spec.get("nodeName") or (spec.get("nodeSelector") or {}).get(
            "kubernetes.io/hostname")
        if node:
            grouped.setdefault(str(node), []).append(pod)
    return grouped


def sort_findings(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Most severe first, then cluster-wide before nodes, then by node and code."""
    return tuple(sorted(findings, key=lambda f: (-f.severity.rank, f.node is not None,
                                                 f.node or "", f.code, f.subject)))


def _counts(nodes: Mapping[str, NodeView], in_progress: int) -> SnapshotCounts:
    views = list(nodes.values())
    return SnapshotCounts(
        gpu_nodes=len(views), nodes_ready=sum(1 for n in views if n.ready),
        nodes_cordoned=sum(1 for n in views if n.cordoned),
        gpus_total=sum(max(n.resources.capacity, n.gpu_count) for n in views),
        gpus_allocatable=sum(n.resources.allocatable for n in views),
        nodes_with_findings=sum(1 for n in views if n.findings),
        upgrades_in_progress=in_progress)


class SnapshotBuilder:
    """Builds snapshots, remembering node views between builds.

    Args:
        thresholds: any object with the four ``*_minutes`` attributes
            (``gputui.settings.Thresholds`` fits); the domain defaults otherwise.
    """

    def __init__(self, thresholds: ThresholdsLike = DEFAULT_THRESHOLDS) -> None:
        self._thresholds = thresholds
        self._entries: dict[str, _Entry] = {}
        self._shared: _Shared | None = None
        self._mig_cache = MigConfigCache()
        self._mig_views: dict[str, tuple[NodeView, str, NodeMigView]] = {}

    def build(self, objects: ClusterObjects, now: float,
              changed_nodes: Collection[str] | None = None) -> ClusterSnapshot:
        """A snapshot of ``objects`` at ``now`` (epoch seconds).

        Args:
            objects: the cache's current objects.
            now: the clock (emulated or real) used for ages and thresholds.
            changed_nodes: nodes whose Node, pods or events changed since the previous
                build; None rebuilds every node.
        """
        policy = read_cluster_policy(objects.cluster_policies)
        namespace = objects.operator_namespace or policy.namespace
        daemonsets = summarize_daemonsets(objects.daemonsets, objects.pods, namespace)
        upgrade_policy = driver_policy(policy, objects.nvidia_drivers)
        shared = _Shared(policy.state != "missing", policy.disabled_operands,
                         frozenset(ds.operand for ds in daemonsets), upgrade_policy, namespace,
                         driver_generations(objects.daemonsets), policy.mig_config_name)
        events = last_events(objects.events)
        nodes = self._nodes(objects, now, changed_nodes, shared, events)
        nodes = self._with_xids(nodes, objects, now)
        upgrade = build_upgrade_view(list(nodes.values()), upgrade_policy,
                                     policy.sandbox_workloads, daemonsets, events, now)
        findings = [f for n in nodes.values() for f in n.findings]
        findings += cluster_policy_findings(policy, objects.forbidden)
        findings += upgrade_blocked(upgrade) + daemonset_findings(daemonsets, nodes)
        return ClusterSnapshot(
            context=objects.context, server=objects.server, generated_at=now,
            operator_namespace=namespace, cluster_policy=policy, nodes=nodes, upgrade=upgrade,
            mig=self._mig(nodes, policy, namespace, objects), findings=sort_findings(findings),
            daemonsets=daemonsets, counts=_counts(nodes, upgrade.in_progress),
            forbidden=objects.forbidden)

    def _nodes(self, objects: ClusterObjects, now: float, changed: Collection[str] | None,
               shared: _Shared, events: Mapping[str, UpgradeEvent]) -> Mapping[str, NodeView]:
        rebuild_all = changed is None or shared != self._shared
        self._shared = shared
        grouped: dict[str, list[JsonDict]] | None = None
        entries: dict[str, _Entry] = {}
        for name in sorted(objects.nodes):
            old = self._entries.get(name)
            event = events.get(name)
            if (old is not None and not rebuild_all and changed is not None
                    and name not in changed and old.event == event
                    and (old.recheck_at is None or old.recheck_at > now)):
                entries[name] = old
                continue
            if grouped is None:
                grouped = _group_pods(objects.pods)
            entries[name] = self._build_node(objects, name, grouped.get(name, []), shared,
                                             event, now)
        self._entries = entries
        return MappingProxyType({name: entry.view for name, entry in entries.items()})

    def _build_node(self, objects: ClusterObjects, name: str, pods: list[JsonDict],
                    shared: _Shared, event: UpgradeEvent | None, now: float) -> _Entry:
        inputs = NodeInputs(
            node=objects.nodes[name], pods=pods, label_times=objects.label_times.get(name, {}),
            policy_present=shared.policy_present, disabled=shared.disabled,
            with_daemonset=shared.with_daemonset, upgrade_policy=shared.upgrade_policy,
            event=event, driver_generations=dict(shared.driver_generations),
            mig_configs=self._mig_configs(objects, name, shared))
        view, recheck_at = build_node(inputs, self._thresholds, now)
        return _Entry(view, recheck_at, event)

    def _mig_configs(self, objects: ClusterObjects, name: str,
                     shared: _Shared) -> tuple[str, tuple[str, ...]] | None:
        """(source ConfigMap, config names) for a node that asks for a MIG config."""
        if not kube.labels_of(objects.nodes[name]).get(MIG_CONFIG):
            return None
        source, configmap = config_source(name, shared.namespace, shared.mig_config_name,
                                          objects.configmaps)
        if configmap is None:
            return None
        return source, tuple(self._mig_cache.get(configmap).configs)

    def _with_xids(self, nodes: Mapping[str, NodeView], objects: ClusterObjects,
                   now: float) -> Mapping[str, NodeView]:
        """Add ``xid-error`` findings (fed by the metrics layer) to the nodes that have any."""
        if not objects.xids:
            return nodes
        merged = dict(nodes)
        for name, xids in objects.xids.items():
            if name in merged and xids:
                view = merged[name]
                found = tuple(sorted(view.findings + tuple(xid_node_findings(name, xids, now)),
                                     key=lambda f: -f.severity.rank))
                merged[name] = replace(view, findings=found, worst=found[0].severity)
        return MappingProxyType(merged)

    def _mig(self, nodes: Mapping[str, NodeView], policy: ClusterPolicyView,
             namespace: str | None, objects: ClusterObjects) -> MigView:
        views: dict[str, NodeMigView] = {}
        cached: dict[str, tuple[NodeView, str, NodeMigView]] = {}
        for name, node in nodes.items():
            if not (node.mig_capable or node.mig_config):
                continue
            key = _configmaps_key(objects.configmaps, namespace, name)
            old = self._mig_views.get(name)
            if old is not None and old[0] is node and old[1] == key:
                view = old[2]
            else:
                view = node_mig_view(node, namespace, policy.mig_config_name,
                                     objects.configmaps, self._mig_cache)
            views[name] = view
            cached[name] = (node, key, view)
        self._mig_views = cached
        return MigView(strategy=policy.mig_strategy, nodes=MappingProxyType(views))


def _configmaps_key(configmaps: Mapping[tuple[str, str], JsonDict], namespace: str | None,
                    node: str) -> str:
    """Resource versions of the ConfigMaps that can shape a node's MIG view."""
    parts: list[Any] = []
    for name in (node + "-mig-config", "default-mig-parted-config"):
        cm = configmaps.get((namespace or "", name))
        parts.append(kube.sub(cm, "metadata").get("resourceVersion", id(cm)) if cm else "-")
    return "|".join(str(p) for p in parts) + f"|{len(configmaps)}"


__all__ = ["DaemonSetSummary", "SnapshotBuilder", "sort_findings"]
