"""The snapshot builder: :class:`ClusterObjects` in, one frozen :class:`ClusterSnapshot` out.

Cost follows change (ARCHITECTURE.md, "Data flow" 2). A node's view is rebuilt only when the
caller says it changed, when its pods differ from the last build (:class:`PodIndex`), when its
last upgrade event or its ``<node>-mig-config`` changed, when a time threshold it was waiting
on has passed, or when cluster-wide inputs that shape every node changed (ClusterPolicy,
operand DaemonSets, shared MIG ConfigMaps). Everything derived from all nodes (node mapping,
counts, findings, upgrade lanes and reasons, MIG view) is then updated by the changed nodes
only (:class:`Fleet`, :class:`UpgradeTracker`, :class:`MigTracker`).

``changed_nodes=None`` is a full build: every view is made afresh.
"""

from __future__ import annotations

import copy
import heapq
import operator
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from gputui.domain import kube
from gputui.domain.catalogue import SLOW_GPU_JOIN
from gputui.domain.coming_up import ComingUpTracker
from gputui.domain.daemonsets import driver_revisions, summarize_daemonsets
from gputui.domain.disruption import BudgetWatch
from gputui.domain.findings_cluster import (
    cluster_policy_findings,
    daemonset_findings,
    no_gpu_nodes_seen,
)
from gputui.domain.findings_health import counter_findings
from gputui.domain.findings_metrics import metric_findings
from gputui.domain.findings_upgrade import required_stalled
from gputui.domain.fleet import Fleet, finding_order
from gputui.domain.gpu_count import CountTracker, with_drops
from gputui.domain.inputs import ClusterObjects, GpuHealth, JsonDict, XidEvent
from gputui.domain.join_pools import JoinSettings, JoinTracker, slow_join_findings
from gputui.domain.joins import AllocatableObserver
from gputui.domain.labels import DEVICE_PLUGIN_CONFIG, MIG_CONFIG
from gputui.domain.mig import MigSpec, config_source
from gputui.domain.model import (
    ClusterPolicyView,
    ClusterSnapshot,
    DaemonSetSummary,
    Finding,
    NodeView,
    PoolJoins,
    Severity,
    UpgradeEvent,
    UpgradePolicy,
    UpgradeView,
)
from gputui.domain.node_build import NodeInputs, build_node
from gputui.domain.nodes import read_basics
from gputui.domain.podindex import PodIndex, pod_node_name
from gputui.domain.policy import driver_policies, driver_policy, read_cluster_policy
from gputui.domain.sanitize import clean_line
from gputui.domain.readgaps import METRICS, merged, node_unknowns
from gputui.domain.findings_healthchecks import health_checks_off
from gputui.domain.operands_absent import operand_tolerations
from gputui.domain.sharing import sharing_config_names
from gputui.domain.snapshot_mig import MigTracker, configmap_changes
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, ThresholdsLike
from gputui.domain.upgrade_blocked import judge_blocked
from gputui.domain.upgrade_events import last_events
from gputui.domain.upgrade_index import UpgradeTracker


@dataclass(frozen=True, slots=True)
class _Entry:
    view: NodeView
    recheck_at: float | None
    event: UpgradeEvent | None


#: lists without which a node's pipeline and findings cannot be told (its Node is not enough)
_FINDING_INPUTS = frozenset({"pods", "daemonsets", "clusterpolicies", "nvidiadrivers"})


@dataclass(frozen=True, slots=True)
class _Shared:
    """Cluster-wide inputs that shape every node; a change rebuilds all nodes."""

    policy_present: bool
    disabled: tuple[str, ...]
    with_daemonset: frozenset[str]
    upgrade_policy: UpgradePolicy | None
    namespace: str | None
    driver_revisions: tuple[tuple[str, str], ...] = ()
    mig_config_name: str | None = None
    #: the device plugin's config ConfigMap (ClusterPolicy ``devicePlugin.config.name``)
    device_plugin_config: str | None = None
    #: pods, DaemonSets or the ClusterPolicy not listed yet: pipelines and findings unknown
    loading: bool = False
    #: those that could not be read (403): a node without findings is unknown, not ok
    unknown: tuple[str, ...] = ()
    #: the tolerations the operand pods carry (None: no operand DaemonSet seen)
    tolerations: tuple[tuple[str, str, str, str], ...] | None = None


def sort_findings(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Most severe first, then cluster-wide before nodes, then by node and code."""
    return tuple(sorted(findings, key=finding_order))


def _with_metrics(view: NodeView, xids: Sequence[XidEvent], health: GpuHealth | None,
                  now: float, lookback_seconds: float, physical: int | None,
                  thresholds: object = DEFAULT_THRESHOLDS) -> NodeView:
    """``view`` plus its metrics findings (XIDs, missing GPUs, row remaps, health counters)."""
    extra = metric_findings(view, xids, health, now, lookback_seconds, physical)
    extra += counter_findings(view.name, health, thresholds)
    if not extra:
        return view if health is None else replace(view, gpu_health=health)
    found = tuple(sorted(view.findings + tuple(extra), key=lambda f: -f.severity.rank))
    return replace(view, findings=found, worst=found[0].severity,
                   xids=tuple(sorted(xids, key=lambda x: (x.gpu, x.when, x.xid))),
                   gpu_health=health)


class SnapshotBuilder:
    """Builds snapshots, remembering node views between builds.

    Args:
        thresholds: any object with the ``*_minutes`` attributes of
            :class:`~gputui.domain.thresholds.ThresholdsLike` (``gputui.settings.Thresholds``
            is the domain's own class); the domain defaults otherwise.
    """

    def __init__(self, thresholds: ThresholdsLike = DEFAULT_THRESHOLDS) -> None:
        self._thresholds = thresholds
        self._entries: dict[str, _Entry] = {}
        self._shared: _Shared | None = None
        self._pods = PodIndex()
        self._fleet = Fleet()
        self._upgrades = UpgradeTracker()
        self._mig = MigTracker()
        self._deadlines: list[tuple[float, str]] = []
        self._event_source: tuple[JsonDict, ...] | None = None
        self._events: dict[str, UpgradeEvent] = {}
        self._configmaps: dict[tuple[str, str], JsonDict] | None = None
        self._xid_nodes: set[str] = set()
        #: why metrics could not be read this build ("" when read): see :meth:`_nodes`
        self._metrics_gap = ""
        #: node -> (its view, that view with GPU health unknown), see :meth:`_blinded`
        self._blind: dict[str, tuple[NodeView, NodeView]] = {}
        self._coming = ComingUpTracker()
        self._joins = JoinTracker(JoinSettings.of(thresholds))
        self._observer = AllocatableObserver()
        self._slow: set[str] = set()
        self._counts = CountTracker()
        self._dropped: set[str] = set()
        #: since when the driver DaemonSet's pods have differed from desired (None: they match)
        self._blocked_since: float | None = None
        #: the budgets of the pods drains could not evict (their change rebuilds those nodes)
        self._budgets = BudgetWatch()

    def fork(self) -> SnapshotBuilder:
        """An independent builder in this one's state, for a fraction of a full build.

        Why: a replay parks warm builders across a recording (``gputui.sources.tape.
        pool``); a fresh one costs a full build (2 s at 5,000 nodes) and holds the
        GIL that long against the operator's jumps, a fork of a warm one costs its
        containers (tens of ms) and then only what changed on the way to where it parks.
        Node views, findings and the input objects are immutable and shared; every
        container either builder changes afterwards is its own.
        """
        other = copy.copy(self)
        other._entries, other._events = dict(self._entries), dict(self._events)
        other._deadlines = list(self._deadlines)
        other._configmaps = None if self._configmaps is None else dict(self._configmaps)
        other._xid_nodes, other._slow = set(self._xid_nodes), set(self._slow)
        other._blind = dict(self._blind)
        other._pods, other._fleet = self._pods.fork(), self._fleet.fork()
        other._upgrades, other._mig = self._upgrades.fork(), self._mig.fork()
        other._coming, other._joins = self._coming.fork(), self._joins.fork()
        other._observer = self._observer.fork()
        other._counts, other._dropped = self._counts.fork(), set(self._dropped)
        other._budgets = self._budgets.fork()
        return other

    def build(self, objects: ClusterObjects, now: float,
              changed_nodes: Collection[str] | None = None) -> ClusterSnapshot:
        """A snapshot of ``objects`` at ``now`` (epoch seconds).

        Args:
            objects: the cache's current objects.
            now: the clock (emulated or real) used for ages and thresholds.
            changed_nodes: nodes whose Node, pods or events changed since the previous
                build (pods tied to nodes by :func:`pod_node_name`); None rebuilds every node.

        Callers that build big clusters pause the garbage collector around this call
        (:func:`gputui.gctuning.paused`): a full build allocates ~10^6 small acyclic objects
        next to the caller's ~10^6 JSON containers, and collections over them measured a
        third to a half of a 5,000-node build. The domain stays pure and leaves it to them.
        """
        unreadable = merged(objects.unreadable, objects.forbidden)
        unknown = node_unknowns(unreadable)
        self._metrics_gap = unreadable.get(METRICS, "")
        # forbidden is not missing: nothing may be said about a policy gputui cannot read
        policy = (ClusterPolicyView(state="unknown") if "clusterpolicies" in unknown
                  else read_cluster_policy(objects.cluster_policies))
        namespace = objects.operator_namespace or policy.namespace
        touched = self._pods.update(objects.pods, changed_nodes)
        daemonsets = summarize_daemonsets(objects.daemonsets, objects.pods, namespace,
                                          owned=self._pods.owned(namespace))
        upgrade_policy = driver_policy(policy, objects.nvidia_drivers)
        shared = _Shared(policy.state != "missing", policy.disabled_operands,
                         frozenset(ds.operand for ds in daemonsets), upgrade_policy, namespace,
                         driver_revisions(objects.daemonsets, self._pods.revisions(namespace)),
                         policy.mig_config_name,
                         policy.device_plugin_config or None,
                         bool(objects.loading & _FINDING_INPUTS), unknown,
                         operand_tolerations(objects.daemonsets))
        events, event_nodes = self._read_events(objects.events)
        event_nodes |= self._budgets.update(objects, unreadable, events)
        mig_nodes = configmap_changes(self._configmaps, objects.configmaps, objects.nodes,
                                      shared.mig_config_name)
        self._configmaps = dict(objects.configmaps)
        full = changed_nodes is None or shared != self._shared or mig_nodes is None
        self._shared = shared
        todo = None if full else ({*(changed_nodes or ()), *touched, *event_nodes,
                                   *(mig_nodes or ())})
        nodes = self._nodes(objects, now, todo, shared, events)
        joins = self._joins.pools(now)
        if not shared.loading:
            self._slow_joins(joins, now)
            self._count_drops(objects)
            nodes = self._fleet.nodes()
        groups = driver_policies(policy, objects.nvidia_drivers)
        upgrade = self._upgrades.view(upgrade_policy, policy.sandbox_workloads, daemonsets,
                                      events, now, groups)
        cluster: list[Finding] = []
        if not shared.loading:
            self._blocked_since, cluster = judge_blocked(
                self._blocked_since, upgrade, nodes, now, objects.events, daemonsets,
                self._shared.tolerations if self._shared else None)
            cluster += daemonset_findings(daemonsets, nodes)
            cluster += required_stalled(upgrade, nodes, self._thresholds, now, groups)
            cluster += no_gpu_nodes_seen(policy, nodes)
            cluster += health_checks_off(objects.daemonsets, objects.cluster_policies, nodes)
            normal, blamed = (self._normal_life(upgrade, cluster) if policy.state == "notReady"
                              else ("", ""))
            cluster += cluster_policy_findings(policy, objects.forbidden, normal, blamed)
        return ClusterSnapshot(
            # a display name: a kubeconfig's context may hold what the terminal must not see
            context=clean_line(objects.context), server=objects.server, generated_at=now,
            operator_namespace=namespace, cluster_policy=policy, nodes=nodes, upgrade=upgrade,
            mig=self._mig.view(policy.mig_strategy), findings=self._fleet.findings(cluster),
            daemonsets=daemonsets, counts=self._fleet.counts(upgrade.in_progress),
            forbidden=objects.forbidden, loading=objects.loading, unreadable=unreadable,
            sharing_configs=sharing_config_names(objects.configmaps, namespace,
                                                 policy.device_plugin_config), joins=joins,
            cluster_uid=objects.cluster_uid)

    def _normal_life(self, upgrade: UpgradeView, cluster: Sequence[Finding]) -> tuple[str, str]:
        """(what explains a notReady ClusterPolicy as normal life, the node findings it is
        blamed on), ("", "") when something else fails.

        Every GPU node whose pipeline is not ready must be explained, each on its own: by
        the driver upgrade that took it, by coming up within its grace
        (:mod:`gputui.domain.coming_up`, judged from its pipeline and age), or by a cause
        finding of its own that keeps it not ready (``mig-no-instances``: blamed, so the
        warning is said once, on the node). An upgrade rolling elsewhere does not explain a
        node that joins, and a node's info findings do not explain anything (an old XID is
        not a reason for notReady).
        """
        blamed = self._coming.blamed
        if any(f.severity.rank >= 2 for f in cluster) or self._coming.unsettled or (
                self._fleet.nodes_with(3) + self._fleet.nodes_with(2) > len(blamed) and (
                    self._fleet.names_with(3) | self._fleet.names_with(2)) - blamed):
            return "", ""
        parts = []
        if upgrade.pending or upgrade.in_progress:
            parts.append(f"a driver upgrade rolls ({upgrade.pending} waiting, "
                         f"{upgrade.in_progress} in progress)")
        coming = self._coming.phrase()
        if coming:
            parts.append(coming)
        return " and ".join(parts), self._coming.blame()

    def _slow_joins(self, joins: Sequence[PoolJoins], now: float) -> None:
        """Put ``slow-gpu-join`` on the nodes still joining past their pool's limit (and take
        it off those no longer so): a node's own finding, though the limit comes from its
        pool, so the node list, the header and describe show it like any other.

        A node with a warning or critical finding of its own (a crash-looping driver, MIG
        enabled with no instances) is slow because of it: the join is then info that names
        the cause, so the operator reads one warning, on the cause.
        """
        found = {f.node: f for f in slow_join_findings(joins, self._fleet.views, now) if f.node}
        for name in sorted(self._slow | found.keys()):
            view = self._fleet.views.get(name)
            if view is None:
                continue
            kept = tuple(f for f in view.findings if f.code != SLOW_GPU_JOIN)
            new = found.get(name)
            cause = next((f for f in kept if f.severity.rank >= Severity.WARNING.rank), None)
            if new is not None and cause is not None:
                new = replace(new, severity=Severity.INFO,
                              message=f"{new.message} (because of {cause.code})")
            findings = tuple(sorted(kept + ((new,) if new is not None else ()),
                                    key=lambda f: -f.severity.rank))
            if findings != view.findings:
                self._publish(name, replace(view, findings=findings,
                                            worst=findings[0].severity if findings else None))
        self._slow = set(found)

    def _count_drops(self, objects: ClusterObjects) -> None:
        """Put ``gpu-count-dropped`` on the nodes with fewer GPUs than their pool siblings
        or than they had (and take it off those no longer so): judged across nodes, like
        a slow join, but the node's own finding (:mod:`gputui.domain.gpu_count`)."""
        found = self._counts.findings(objects.gpu_health)
        for name, view in with_drops(self._fleet.views, found, self._dropped).items():
            self._publish(name, view)
        self._dropped = set(found)

    def _read_events(self, source: Sequence[JsonDict]) -> tuple[dict[str, UpgradeEvent],
                                                                 set[str]]:
        """The last upgrade event per node, and the nodes whose last event changed."""
        old = self._event_source
        if old is not None and len(old) == len(source) and all(map(operator.is_, old, source)):
            return self._events, set()
        events = last_events(source)
        changed = {name for name in events.keys() | self._events.keys()
                   if events.get(name) != self._events.get(name)}
        self._event_source, self._events = tuple(source), events
        return events, changed

    def _nodes(self, objects: ClusterObjects, now: float, todo: set[str] | None,
               shared: _Shared, events: Mapping[str, UpgradeEvent]) -> Mapping[str, NodeView]:
        """Rebuild the nodes in ``todo`` (every node when None) and pass the changes on."""
        if todo is None:
            self._entries, self._deadlines, self._xid_nodes = {}, [], set()
            self._fleet, self._mig, self._coming = Fleet(), MigTracker(), ComingUpTracker()
            self._joins, self._slow = JoinTracker(JoinSettings.of(self._thresholds)), set()
            self._dropped = set()
            self._counts.keep(objects.nodes)
            self._upgrades.reset()
            todo = set(objects.nodes)
        else:
            todo |= self._due(now)
            if objects.nodes.keys() != self._entries.keys():
                todo |= objects.nodes.keys() - self._entries.keys()
                for gone in self._entries.keys() - objects.nodes.keys():
                    self._forget(gone)
        generations = dict(shared.driver_revisions)
        xids = {name for name, seen in objects.xids.items() if seen and name in objects.nodes}
        xids |= {name for name in objects.gpu_health if name in objects.nodes}
        for name in sorted(n for n in todo if n in objects.nodes):
            entry = self._build_node(objects, name, shared, events.get(name), generations, now)
            self._entries[name] = entry
            if entry.recheck_at is not None:
                heapq.heappush(self._deadlines, (entry.recheck_at, name))
            self._mig.put(name, entry.view, shared.namespace, shared.mig_config_name,
                          objects.configmaps)
            if name not in xids:
                self._publish(name, entry.view)
        # metrics could not be read: the GPU health of every node not read is unknown
        blind = ({n for n in objects.nodes if n not in objects.gpu_health}
                 if self._metrics_gap else set())
        for name in sorted(xids | blind | {n for n in self._xid_nodes if n in objects.nodes}):
            view = self._entries[name].view
            if name in xids:
                view = self._metrics_view(objects, view, name, now)
            if name in blind:
                view = self._blinded(name, view)
            self._publish(name, view)
        self._xid_nodes = xids | blind
        self._blind = {n: held for n, held in self._blind.items() if n in blind}
        return self._fleet.nodes()

    def _blinded(self, name: str, view: NodeView) -> NodeView:
        """``view`` with its GPU health unknown; the same object while nothing changed, so
        publishing it again costs nothing (the trackers compare by identity)."""
        held = self._blind.get(name)
        if held is not None and held[0] is view and held[1].health_unknown == self._metrics_gap:
            return held[1]
        self._blind[name] = (view, replace(view, health_unknown=self._metrics_gap))
        return self._blind[name][1]

    def _metrics_view(self, objects: ClusterObjects, view: NodeView, name: str,
                      now: float) -> NodeView:
        lookback = 60.0 * getattr(self._thresholds, "xid_lookback_minutes", 60.0)
        return _with_metrics(view, objects.xids.get(name, ()), objects.gpu_health.get(name),
                             now, lookback, self._mig.physical_gpus(name, view),
                             self._thresholds)

    def _publish(self, name: str, view: NodeView | None) -> None:
        self._counts.put(name, view, None if view is None
                         else self._mig.physical_gpus(name, view))
        self._fleet.put(name, view)
        self._upgrades.put(name, view)
        self._coming.put(name, view)
        self._joins.put(name, view)

    def _forget(self, name: str) -> None:
        del self._entries[name]
        self._observer.forget(name)
        self._publish(name, None)
        self._mig.put(name, None, None, None, {})

    def _due(self, now: float) -> set[str]:
        """Nodes whose next threshold has passed (stale heap entries are skipped)."""
        due: set[str] = set()
        while self._deadlines and self._deadlines[0][0] <= now:
            when, name = heapq.heappop(self._deadlines)
            entry = self._entries.get(name)
            if entry is not None and entry.recheck_at == when:
                due.add(name)
        return due

    def _build_node(self, objects: ClusterObjects, name: str, shared: _Shared,
                    event: UpgradeEvent | None, generations: Mapping[str, str],
                    now: float) -> _Entry:
        mig = self._mig_configs(objects, name, shared)
        basics = read_basics(objects.nodes[name])
        inputs = NodeInputs(
            node=objects.nodes[name], basics=basics, pods=self._pods.pods_of(name),
            label_times=objects.label_times.get(name, {}),
            policy_present=shared.policy_present, disabled=shared.disabled,
            with_daemonset=shared.with_daemonset, upgrade_policy=shared.upgrade_policy,
            event=event, driver_revisions=generations,
            mig_configs=mig[0] if mig else None, mig_specs=mig[1] if mig else None,
            loading=shared.loading,
            unknown=shared.unknown, sharing_configs=self._sharing_configs(objects, name, shared),
            observed_allocatable=self._observer.see(name, basics, now),
            tolerations=shared.tolerations, budgets=self._budgets.of(name))
        view, recheck_at = build_node(inputs, self._thresholds, now)
        return _Entry(view, recheck_at, event)

    @staticmethod
    def _sharing_configs(objects: ClusterObjects, name: str,
                         shared: _Shared) -> tuple[str, tuple[str, ...]] | None:
        """(ConfigMap, its keys) for a node that names a device-plugin config, when read."""
        if not kube.sub(objects.nodes[name], "metadata", "labels").get(DEVICE_PLUGIN_CONFIG):
            return None
        if not shared.namespace or not shared.device_plugin_config:
            return None
        if (shared.namespace, shared.device_plugin_config) not in objects.configmaps:
            return None  # not read (or absent): what it offers is unknown, say nothing
        return shared.device_plugin_config, sharing_config_names(
            objects.configmaps, shared.namespace, shared.device_plugin_config)

    def _mig_configs(self, objects: ClusterObjects, name: str, shared: _Shared) -> tuple[
            tuple[str, tuple[str, ...]], Mapping[str, tuple[MigSpec, ...]]] | None:
        """((source ConfigMap, config names), what each config does) for a node that asks
        for a MIG config."""
        if not kube.sub(objects.nodes[name], "metadata", "labels").get(MIG_CONFIG):
            return None
        source, configmap = config_source(name, shared.namespace, shared.mig_config_name,
                                          objects.configmaps)
        if configmap is None:
            return None
        specs = self._mig.specs_of(configmap)
        return (source, tuple(specs)), specs


__all__ = ["DaemonSetSummary", "SnapshotBuilder", "pod_node_name", "sort_findings"]
