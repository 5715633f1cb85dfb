"""The panes a finding, a key or a command can send the operator to, once.

``Finding.pane`` names one (the catalogue gives each finding code its pane,
:func:`gputui.domain.catalogue.finding`), ``JumpRequested``/``app.jump_to`` take one, and the
UI's routing (``gputui.ui.contracts.PANE_TARGETS``: which view, which detail tab) is keyed by
them and checked to cover them all. A test fails if a second list of pane names appears.
"""

from __future__ import annotations

from enum import StrEnum


class Pane(StrEnum):
    """Where to look next; a member equals its name (``Pane.MIG == "mig"``)."""

    #: the node list
    NODES = "nodes"
    #: the selected node's operand chain (a detail tab of the node screen)
    PIPELINE = "pipeline"
    #: the selected node described (a detail tab)
    NODE = "node"
    #: the selected node's GPU metrics (a detail tab)
    METRICS = "metrics"
    #: the driver upgrade's lanes
    UPGRADE = "upgrade"
    #: the MIG layouts
    MIG = "mig"
    #: every finding of the cluster
    FINDINGS = "findings"
    #: what changed, and when
    TIMELINE = "timeline"
