"""Cordon and uncordon (k9s keys ``c`` and ``u``): mark nodes (un)schedulable.

The same patch kubectl sends (``spec.unschedulable``), so a node cordoned by gputui is the
twin of one cordoned by ``kubectl cordon``. Nodes already in the wanted state are left out
of the plan, and a plan with nothing left says so instead of asking.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gputui.actions.base import (
    PATCH_NODES,
    Change,
    ClusterWriter,
    ParamSpec,
    Permission,
    Plan,
    ProgressCallback,
    Result,
    Risk,
    Scope,
)
from gputui.actions.impact import gpu_pod_lines, nodes_of, risk_warnings, unavailable_line
from gputui.actions.patches import apply_patches
from gputui.domain.model import ClusterSnapshot


def cordon_change(node: str, unschedulable: bool = True) -> Change:
    """The patch ``kubectl cordon``/``uncordon`` sends: ``unschedulable: true``, or the
    field removed (``null``: the field is omitted when false, so kubectl's diff drops it)."""
    verb = "cordon" if unschedulable else "uncordon"
    return Change("patch", "Node", node, {"spec": {"unschedulable": True if unschedulable
                                                   else None}},
                  kubectl=f"kubectl {verb} {node}",
                  summary=f"spec.unschedulable: {str(not unschedulable).lower()} -> "
                          f"{str(unschedulable).lower()}")


@dataclass  # not frozen: the Action protocol declares plain attributes
class SchedulingAction:
    """Cordon (``unschedulable=True``) or uncordon the target nodes."""

    id: str
    title: str
    tooltip: str
    keys: str
    aliases: tuple[str, ...]
    unschedulable: bool
    scope: Scope = Scope.NODES
    risk: Risk = Risk.SAFE
    permissions: tuple[Permission, ...] = (PATCH_NODES,)
    params: tuple[ParamSpec, ...] = ()

    def plan(self, snapshot: ClusterSnapshot, targets: Sequence[str],
             params: Mapping[str, Any]) -> Plan:
        """One patch per node not already in the wanted state."""
        verb = "cordon" if self.unschedulable else "uncordon"
        known = nodes_of(snapshot, targets)
        todo = [n.name for n in known if n.cordoned != self.unschedulable]
        title = f"{verb.capitalize()} {_count(todo or list(targets))}"
        if not todo:
            state = "cordoned" if self.unschedulable else "schedulable"
            missing = [t for t in targets if t not in snapshot.nodes]
            why = (f"{', '.join(missing)} not found" if missing
                   else f"already {state}: {', '.join(targets) or 'no node selected'}")
            return Plan(self.id, title, tuple(targets), blocked=f"nothing to do ({why})")
        impact: list[str] = []
        warnings: tuple[str, ...] = ()
        if self.unschedulable:
            line = unavailable_line(snapshot, todo)
            impact += [line] if line else []
            impact.append("running pods stay; new pods are not scheduled here")
            impact += gpu_pod_lines(snapshot, todo, "left running")
            warnings = risk_warnings(snapshot, todo)
        else:
            impact.append(f"{_count(todo)} schedulable again")
            warnings = tuple(w for w in risk_warnings(snapshot, todo) if "upgrade" in w)
        skipped = [t for t in targets if t not in todo]
        if skipped:
            impact.append(f"left alone (already {verb}ed or unknown): {', '.join(skipped)}")
        return Plan(self.id, title, tuple(todo),
                    tuple(cordon_change(n, self.unschedulable) for n in todo),
                    impact=tuple(impact), warnings=warnings, risk=self.risk)

    def apply(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
              cancel: threading.Event) -> Result:
        return apply_patches(plan, writer, progress, cancel,
                             "cordoned" if self.unschedulable else "uncordoned")


def _count(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{len(names)} nodes"


CORDON = SchedulingAction(
    "cordon", "Cordon", "Mark the node(s) unschedulable; running pods stay (kubectl cordon).",
    "c", ("cordon",), True)
UNCORDON = SchedulingAction(
    "uncordon", "Uncordon", "Make the node(s) schedulable again (kubectl uncordon).",
    "u", ("uncordon",), False)

ACTIONS = (CORDON, UNCORDON)
