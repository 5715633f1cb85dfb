"""What the upgrade's drain would refuse with new drain settings, read from the server before ``y``.

The GPU Operator's upgrade controller drains a node whose GPU pods cannot be deleted
(k8s-operator-libs' drain manager: kubectl's drain helper with ``IgnoreAllDaemonSets``,
``Force``, ``DeleteEmptyDirData`` and ``PodSelector``, plus
``nvidia.com/gpu-driver-upgrade-drain.skip!=true``). gputui does not send those evictions,
but a pod the settings refuse makes that node's upgrade fail, so the operator must see it
before ``y``: the plan of ``upgrade: set drain`` lists, for the nodes on their way to a drain
now (nearest first, at most :data:`CHECK_LIMIT`), the pods kubectl's rules would refuse with
the new settings and the setting that would allow each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gputui.actions.base import ClusterWriter, Plan, WriteError
from gputui.actions.drain_plan import daemonset_exists
from gputui.actions.drain_rules import DrainOptions, Sorting, sort_pods
from gputui.domain import labels as L
from gputui.domain.upgrade_state import UpgradeState

#: the states before the drain, nearest to it first: nodes the controller will drain next
NEAR_DRAIN = (UpgradeState.DRAIN, UpgradeState.POD_DELETION, UpgradeState.WAIT_JOBS,
              UpgradeState.CORDON)
#: nodes whose pods are listed (one request each): the next ones to drain, not the fleet
CHECK_LIMIT = 10


def check(plan: Plan, writer: ClusterWriter, value: Mapping[str, Any]) -> Plan:
    """``plan`` with the pods the new drain settings would refuse on the nodes nearest their
    drain (warnings) and what was checked (impact). A list that fails is said in the impact
    and does not block: it is a read, not one of the plan's writes."""
    snapshot = plan.basis
    if plan.blocked or snapshot is None or not value.get("enable"):
        return plan
    nodes = sorted((n for n in snapshot.nodes.values() if n.upgrade_state in NEAR_DRAIN),
                   key=lambda n: (NEAR_DRAIN.index(n.upgrade_state), n.name))
    if not nodes:
        none = "no node is on its way to a drain now: no pod was checked against these settings"
        return replace(plan, impact=(*plan.impact, none))
    options = DrainOptions(delete_emptydir=bool(value.get("deleteEmptyDir")),
                           force=bool(value.get("force")))
    selector = ",".join(filter(None, (str(value.get("podSelector") or ""),
                                      f"{L.UPGRADE_DRAIN_SKIP}!=true")))
    warnings: list[str] = []
    for node in nodes[:CHECK_LIMIT]:
        try:
            listed = writer.list_pods_on_node(node.name, label_selector=selector)
        except WriteError as error:  # not a write of the plan: said, not blocking
            unread = (f"the pods of {node.name} could not be listed ({error.reason}): not "
                      "checked against these settings")
            return replace(plan, impact=(*plan.impact, unread),
                           warnings=(*warnings, *plan.warnings))
        sorting = sort_pods(listed, options, lambda ns, name: daemonset_exists(writer, ns, name))
        if sorting.refused:
            warnings.append(_refused_line(node.name, sorting))
    checked = min(len(nodes), CHECK_LIMIT)
    impact = (f"pods listed from the server on {checked} node{'s' if checked != 1 else ''} "
              f"on their way to a drain (of {len(nodes)}): "
              + (f"{len(warnings)} would stop the drain" if warnings else
                 "none would be refused with these settings"))
    return replace(plan, impact=(*plan.impact, impact), warnings=(*warnings, *plan.warnings))


def _refused_line(node: str, sorting: Sorting) -> str:
    parts = [f"{p}: emptyDir; deleteEmptyDir true allows it" for p in sorting.emptydir]
    parts += [f"{p}: no controller; force true allows it" for p in sorting.unmanaged]
    parts += [f"{p}: its DaemonSet is gone; force true allows it" for p in sorting.orphans]
    shown = "; ".join(parts[:3]) + (f"; and {len(parts) - 3} more" if len(parts) > 3 else "")
    return (f"the upgrade's drain of {node} would stop with these settings ({shown}): the "
            "node would go upgrade-failed")
