"""Cluster-wide objects changed with no node named: the live cache asks for no full build
when a DaemonSet, the ClusterPolicy or an NVIDIADriver changes (``gputui.sources.cache``),
so the builder's own comparison must carry such a change to every node it shapes."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from gputui.domain.inputs import ClusterObjects
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f
from tests.domain.factory import rolling_upgrade, rolling_upgrade_objects


def _drop_driver_daemonset(objs: ClusterObjects) -> ClusterObjects:
    driver = f.OPERAND_PODS["driver"][0]
    return replace(objs, daemonsets={k: v for k, v in objs.daemonsets.items() if k != driver})


def _ready_numbers(objs: ClusterObjects) -> ClusterObjects:
    daemonsets = dict(objs.daemonsets)
    name = next(iter(daemonsets))
    changed = copy.deepcopy(daemonsets[name])
    changed["status"]["numberReady"] = 1
    daemonsets[name] = changed
    return replace(objs, daemonsets=daemonsets)


def _disable_an_operand(objs: ClusterObjects) -> ClusterObjects:
    policy = f.merge(copy.deepcopy(dict(objs.cluster_policies[0])),
                     {"spec": {"dcgmExporter": {"enabled": False}}})
    return replace(objs, cluster_policies=[policy])


def _no_cluster_policy(objs: ClusterObjects) -> ClusterObjects:
    return replace(objs, cluster_policies=[])


def _upgrade_limits(objs: ClusterObjects) -> ClusterObjects:
    policy = f.merge(copy.deepcopy(dict(objs.cluster_policies[0])),
                     f.upgrade_policy(autoUpgrade=False, maxParallelUpgrades=5))
    return replace(objs, cluster_policies=[policy])


CHANGES: dict[str, Callable[[ClusterObjects], ClusterObjects]] = {
    "drop-driver-daemonset": _drop_driver_daemonset,
    "daemonset-status": _ready_numbers,
    "disable-operand": _disable_an_operand,
    "no-cluster-policy": _no_cluster_policy,
    "upgrade-policy": _upgrade_limits,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_cluster_wide_change_with_no_node_named_equals_a_full_build(change: str) -> None:
    nodes, pods, events = rolling_upgrade()
    objs: Any = rolling_upgrade_objects(nodes, pods, events)
    builder = SnapshotBuilder()
    builder.build(objs, f.T0)
    changed = CHANGES[change](objs)
    assert builder.build(changed, f.T0, changed_nodes=frozenset()) == \
        SnapshotBuilder().build(changed, f.T0)
