"""The controller's slot arithmetic (§4.5): failed nodes hold slots, cordoned/NotReady nodes
and nodes in ``cordon-required`` count as unavailable, percentages round up against the
managed total; slots are capped at ``maxUnavailable`` and become 0 whenever the unavailable
nodes reach it; only the trimming to ``maxUnavailable - unavailable`` waits for
``maxUnavailable`` below the node count (k8s-operator-libs ``pkg/upgrade/common_manager.go``,
``GetUpgradesAvailable``; ``upgrade_inplace.go``, ``ProcessUpgradeRequiredNodes``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gputui.domain.upgrade_state import UpgradeState, holds_slot


@dataclass(frozen=True, slots=True)
class Slots:
    """The §4.5 figures for one cycle."""

    total: int
    in_progress: int
    max_unavailable: int
    unavailable: int
    available: int
    #: ``maxParallelUpgrades`` (0 = unlimited) and the nodes in ``upgrade-failed``, which
    #: hold their slots; both are needed to say why a node waits
    max_parallel: int = 0
    failed: int = 0


def resolve_max_unavailable(raw: str, total: int) -> int | None:
    """``maxUnavailable`` as a node count: ``"25%"`` of ``total`` rounded up, or an int;
    None when it is neither (the controller rejects it)."""
    text = raw.strip()
    if text.endswith("%"):
        if not text[:-1].isdigit():
            return None
        return math.ceil(total * int(text[:-1]) / 100.0)
    try:
        return int(text)
    except ValueError:
        return None


def compute_slots(states: Mapping[str, str], unavailable_nodes: Sequence[str],
                  max_parallel: int, max_unavailable_raw: str) -> Slots:
    """Slots per §4.5.

    Args:
        states: managed node -> upgrade state label ("" when absent).
        unavailable_nodes: managed nodes that are cordoned or not Ready.
        max_parallel: ``maxParallelUpgrades`` (0 = unlimited).
        max_unavailable_raw: ``maxUnavailable`` as written (``"25%"`` or ``"2"``).
    """
    counts: dict[str, int] = {}
    for state in states.values():
        counts[state] = counts.get(state, 0) + 1
    return slots_from_counts(counts, len(unavailable_nodes), max_parallel, max_unavailable_raw)


def slots_from_counts(counts: Mapping[str, int], down: int, max_parallel: int,
                      max_unavailable_raw: str) -> Slots:
    """:func:`compute_slots` from managed nodes per state and the count of down nodes, so
    an incremental view need not walk every node."""
    total = sum(counts.values())
    in_progress = sum(n for state, n in counts.items() if holds_slot(state))
    required = counts.get(UpgradeState.REQUIRED, 0)
    available = required if max_parallel == 0 else max_parallel - in_progress
    resolved = resolve_max_unavailable(max_unavailable_raw, total)
    unavailable = down + counts.get(UpgradeState.CORDON, 0)
    failed = counts.get(UpgradeState.FAILED, 0)
    if resolved is None:
        return Slots(total, in_progress, 0, unavailable, 0, max_parallel, failed)
    return Slots(total, in_progress, resolved, unavailable,
                 max(upgrades_available(available, unavailable, resolved, total), 0),
                 max_parallel, failed)


def upgrades_available(available: int, unavailable: int, max_unavailable: int,
                       total: int) -> int:
    """``GetUpgradesAvailable``'s ``maxUnavailable`` step, in upstream's order: cap at
    ``maxUnavailable``; none at all once ``unavailable >= maxUnavailable`` (so a one-node
    cluster whose node is NotReady gets no slot); only the trim to what is left of the
    budget needs ``maxUnavailable < total`` (k8s-operator-libs
    ``pkg/upgrade/common_manager.go``). May be negative, as upstream's is."""
    available = min(available, max_unavailable)
    if unavailable >= max_unavailable:
        return 0
    if max_unavailable < total and unavailable + available > max_unavailable:
        return max_unavailable - unavailable
    return available


def slots_in_use(in_progress: int, max_parallel: int, failed: int) -> str:
    """E.g. "4 of 4 in use (1 failed)" or "2 of unlimited in use"."""
    limit = str(max_parallel) if max_parallel else "unlimited"
    told = f" ({failed} failed)" if failed else ""
    return f"{in_progress} of {limit} in use{told}"


def waiting_for_slot(in_progress: int, max_parallel: int, failed: int, unavailable: int,
                     max_unavailable: int, max_unavailable_raw: str) -> str:
    """How a node in ``upgrade-required`` with no free slot is described: "waiting for a
    slot (1 of 1 in use)", or, when ``maxUnavailable`` is what is used up, "waiting for a
    slot (2 of 2 nodes unavailable, maxUnavailable 50%)". Never "blocked": waiting its turn
    is a rolling upgrade's normal life; whether the queue can move by itself is decided
    apart (:func:`needs_operator`)."""
    if unavailable >= max_unavailable:
        return (f"waiting for a slot ({unavailable} of {max_unavailable} nodes unavailable, "
                f"maxUnavailable {max_unavailable_raw})")
    limit = str(max_parallel) if max_parallel else "unlimited"
    told = f", {failed} failed" if failed else ""
    return f"waiting for a slot ({in_progress} of {limit} in use{told})"


def needs_operator(slots: Slots, down_outside: int) -> str | None:
    """Why a queue with no free slot cannot move by itself, or None when it only waits its
    turn: slots held by ``upgrade-failed`` nodes (a failed node keeps its slot until its
    driver pod is ready), or ``maxUnavailable`` used up by ``down_outside`` nodes cordoned
    or NotReady outside the upgrade (``GetUpgradesAvailable`` gives 0 once unavailable
    reaches it). The same causes as the ``upgrade-stalled`` finding."""
    if slots.available > 0:
        return None
    if slots.failed:
        noun = "node holds its slot" if slots.failed == 1 else "nodes hold their slots"
        return f"{slots.failed} upgrade-failed {noun} until fixed"
    if slots.max_unavailable and down_outside >= slots.max_unavailable:
        return (f"maxUnavailable used up by {down_outside} node(s) cordoned or NotReady "
                "outside the upgrade")
    return None
