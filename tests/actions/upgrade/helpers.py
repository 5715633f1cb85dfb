"""Helpers for the upgrade, canary and MIG action tests: an emulated cluster with its
controllers, a KubeWriter on it, and snapshots built the way the app builds them (one list of
every feed over HTTP, then the domain's SnapshotBuilder)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gputui.actions.base import Action, Plan, PlansFromServer, Progress, Result
from gputui.domain.model import ClusterSnapshot
from gputui.domain.snapshot import SnapshotBuilder
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from gputui.sources.writer import KubeWriter
from tests.sim.conftest import Sim

STATE = "nvidia.com/gpu-driver-upgrade-state"
SKIP = "nvidia.com/gpu-driver-upgrade.skip"


class Cluster:
    """A running emulated cluster, a writer on it, and fresh snapshots on demand."""

    def __init__(self, sim: Sim, tmp_path: Path):
        self.sim = sim
        self.kubeconfig = sim.cluster.write_kubeconfig(tmp_path / "kubeconfig")
        self.writer = KubeWriter(load_target(str(self.kubeconfig)))

    def snapshot(self) -> ClusterSnapshot:
        objects = read_objects(load_target(str(self.kubeconfig)))
        return SnapshotBuilder().build(objects, self.sim.cluster.clock.now())

    def policy(self) -> dict[str, Any]:
        obj: dict[str, Any] = self.sim.custom.get_cluster_custom_object(
            "nvidia.com", "v1", "clusterpolicies", "cluster-policy")
        return obj

    def upgrade_policy(self) -> dict[str, Any]:
        return dict(self.policy()["spec"]["driver"]["upgradePolicy"])

    def labels(self, node: str) -> dict[str, str]:
        return dict(self.sim.core.read_node(node).metadata.labels or {})

    def state(self, node: str) -> str:
        return self.labels(node).get(STATE, "")


def plan_of(action: Action, cluster: Cluster, targets: Sequence[str] = (),
            params: Mapping[str, Any] | None = None) -> Plan:
    """The plan as the runner makes it: completed from the server where the action needs
    it (a drain's pods)."""
    plan = action.plan(cluster.snapshot(), list(targets), dict(params or {}))
    if isinstance(action, PlansFromServer) and not plan.blocked:
        plan = action.server_plan(plan, cluster.writer)
    return plan


def apply(action: Action, plan: Plan, cluster: Cluster,
          cancel: threading.Event | None = None) -> tuple[Result, list[Progress]]:
    """Dry-run every change as the runner does, then apply; the progress reports too."""
    assert plan.blocked is None, plan.blocked
    for change in plan.changes:
        if change.verb == "create":
            cluster.writer.evict(change.namespace or "", change.name, dry_run=True)
        else:
            cluster.writer.patch(change, dry_run=True)
    seen: list[Progress] = []
    result = action.apply(plan, cluster.writer, seen.append, cancel or threading.Event())
    return result, seen
