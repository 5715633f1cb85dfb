"""Finding thresholds: any object with these attributes (``gputui.settings.Thresholds``
fits) so the domain never imports settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class ThresholdsLike(Protocol):
    """How long a state may last before it becomes a finding, in minutes."""

    @property
    def upgrade_stalled_minutes(self) -> float: ...

    @property
    def mig_pending_minutes(self) -> float: ...

    @property
    def operand_not_ready_minutes(self) -> float: ...

    @property
    def validator_stuck_minutes(self) -> float: ...

    @property
    def xid_lookback_minutes(self) -> float: ...


@dataclass(frozen=True, slots=True)
class DomainThresholds:
    """The domain's defaults (the same values as ``gputui.settings.Thresholds``)."""

    upgrade_stalled_minutes: float = 30.0
    mig_pending_minutes: float = 10.0
    operand_not_ready_minutes: float = 10.0
    validator_stuck_minutes: float = 5.0
    xid_lookback_minutes: float = 60.0


DEFAULT_THRESHOLDS = DomainThresholds()
