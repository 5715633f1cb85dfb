"""What a node finding rule reads (:class:`NodeContext`) and the rule signature."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gputui.domain.mig import MigSpec
from gputui.domain.model import Finding, NodeView, Severity, UpgradeEvent, UpgradePolicy
from gputui.domain.pods import PodInfo
from gputui.domain.thresholds import ThresholdsLike


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

    def finding(self, code: str, severity: Severity, message: str, hint: str,
                pane: str = "nodes", subject: str = "") -> Finding:
        """A finding about this node."""
        return Finding(code, severity, self.node.name, message, hint, pane, subject)


Rule = Callable[[NodeContext], list[Finding]]
