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

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class SaysWhyNot(Protocol):
    """A screen whose keys stay bound while their action cannot run (``check_action`` hides
    them from the footer); a press is answered with the reason instead of silence (``y``
    in the dialog while its action runs)."""

    def why_not(self, action: str) -> str | None:
        """Why ``action`` (an action name, without parameters) cannot run now, or None."""
