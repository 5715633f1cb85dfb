"""What a node finding rule reads (:class:`NodeContext`) and the rule signature."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gputui.domain import catalogue
from gputui.domain.disruption import HeldBudgets
from gputui.domain.mig import MigSpec
from gputui.domain.model import Finding, NodeView, Severity, UpgradeEvent, UpgradePolicy
from gputui.domain.pods import PodInfo
from gputui.domain.thresholds import ThresholdsLike
from gputui.domain.timefmt import duration, next_change


@dataclass
class NodeContext:
    """What node rules may read; ``deadlines`` collects future re-evaluation times."""

    node: NodeView
    pods: Sequence[PodInfo]
    thresholds: ThresholdsLike
    now: float
    label_times: Mapping[str, float] = field(default_factory=dict)
    policy: UpgradePolicy | None = None
    event: UpgradeEvent | None = None
    ready_reason: str = ""
    ready_since: float | None = None
    mig_configs: tuple[str, tuple[str, ...]] | None = None
    #: what each of those configs does (parsed from the same ConfigMap)
    mig_specs: Mapping[str, tuple[MigSpec, ...]] | None = None
    sharing_configs: tuple[str, tuple[str, ...]] | None = None
    #: (key, operator, value, effect) the operand pods tolerate; None when unknown
    tolerations: tuple[tuple[str, str, str, str], ...] | None = None
    #: what the budgets say about the pod the node's drain could not evict (None: no such
    #: pod, or no verdict)
    budgets: HeldBudgets | None = None
    deadlines: list[float] = field(default_factory=list)

    def over(self, since: float | None, minutes: float) -> bool:
        """``since`` is more than ``minutes`` ago; otherwise remember when it will be."""
        if since is None:
            return False
        due = since + minutes * 60.0
        if due <= self.now:
            return True
        self.deadlines.append(due)
        return False

    def age(self, since: float) -> str:
        """``duration(now - since)`` for a message, and a re-evaluation when that text next
        changes. A node's findings are kept until the node changes or a deadline passes, so
        an age in a message would otherwise stay at what it was when the node last changed
        ("in wait-for-jobs-required for 0 s" beside upgrade lanes, built every time, saying
        66 s; "held since 02:52 (42 s)" at 03:01)."""
        elapsed = max(0.0, self.now - since)
        self.deadlines.append(since + next_change(elapsed))
        return duration(elapsed)

    def finding(self, code: str, message: str, hint: str, subject: str = "", *,
                severity: Severity | None = None) -> Finding:
        """A finding about this node, its pane and usual severity from the catalogue
        (:func:`gputui.domain.catalogue.finding`)."""
        return catalogue.finding(code, self.node.name, message, hint, subject,
                                 severity=severity)


Rule = Callable[[NodeContext], list[Finding]]
