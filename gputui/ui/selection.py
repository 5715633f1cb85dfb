"""What an action started in a view acts on: that view's selected nodes, or why there are none.

Why one answer per view: an action used to take its targets from the node list's cursor
whatever view the operator was in, so ``:mig-safe`` in the MIG view, with an idle A100
selected there, planned against another node (one with a running job) that the node list's
cursor happened to rest on. Now every view answers :meth:`SelectsNodes.selected_nodes`
(the node list: its marks, else its cursor; the upgrade lanes, the MIG cards, a finding's
node, a pool's node, an event's node, an operation's nodes) and the one action path asks the
view the operator is in, nothing else. A view with no node selected says why, and the action
sends nothing. Plain Python (no Textual): a test can build and read selections directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: names a prompt's title lists before it says "and N more"
LABEL_NAMES = 3


@dataclass(frozen=True)
class Selection:
    """The nodes a view has selected (its marks or its cursor), or why it has none.

    Attributes:
        nodes: node names, in the view's order; empty when nothing is selected.
        why_none: one phrase saying why nothing is selected (said when a node action is
            started there: ``Cordon: no node here: ...; nothing was sent``).
    """

    nodes: tuple[str, ...] = ()
    why_none: str = "no node is selected"

    @classmethod
    def of(cls, nodes: Iterable[str | None], why_none: str) -> Selection:
        """The names in ``nodes`` that are not None or empty (``why_none`` if none are)."""
        return cls(tuple(n for n in nodes if n), why_none)


@runtime_checkable
class SelectsNodes(Protocol):
    """A screen whose selection node actions act on (every view, the progress dialog)."""

    def selected_nodes(self) -> Selection:
        """The nodes an action started here acts on now, or why there are none."""


def targets_label(nodes: Sequence[str]) -> str:
    """The targets as a prompt's title names them: ``gpu-1``, ``gpu-1, gpu-2``, or
    ``5 nodes: gpu-1, gpu-2, gpu-3 and 2 more``; ``the cluster`` for none."""
    if not nodes:
        return "the cluster"
    if len(nodes) <= LABEL_NAMES:
        return ", ".join(nodes)
    shown = ", ".join(nodes[:LABEL_NAMES])
    return f"{len(nodes)} nodes: {shown} and {len(nodes) - LABEL_NAMES} more"
