"""Until when is a stage that is coming up still normal? (grace periods per stage)

A stage that is not ready yet is normal while it is inside its grace period: its own upstream
budget (:mod:`gputui.domain.thresholds`) counted from when its current attempt started, and
never before what it waits on (``NodePipeline.waits_on``) has had its own grace. So a
validator waiting behind a driver that compiles for 18 minutes is quiet, and one that still
waits 5 minutes after the driver's 21-minute budget has run out is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from gputui.domain.model import WAITS_ON, NodePipeline, PipelineStage, StageStatus
from gputui.domain.pods import PodInfo
from gputui.domain.thresholds import SOURCES, ThresholdsLike

#: operand -> the threshold field that bounds its start-up
_FIELD = {"driver": "driver_startup_minutes", "operator-validator": "validator_stuck_minutes"}


def grace_field(operand: str) -> str:
    """The :class:`ThresholdsLike` attribute bounding ``operand``'s start-up."""
    return _FIELD.get(operand, "operand_not_ready_minutes")


def grace_minutes(operand: str, thresholds: ThresholdsLike) -> float:
    """``operand``'s start-up grace in minutes."""
    return float(getattr(thresholds, grace_field(operand)))


def grace_source(operand: str, thresholds: ThresholdsLike) -> str:
    """E.g. "21 min, the driver container's startup probe"."""
    minutes = grace_minutes(operand, thresholds)
    return f"{minutes:g} min, {SOURCES[grace_field(operand)]}"


def attempt_started(stage: PipelineStage, pods: Sequence[PodInfo]) -> float | None:
    """When the stage's current attempt began: the latest start among the pod's containers
    that are not done (a restarted container after a reboot), else the pod's start."""
    pod = next((p for p in pods if p.name == stage.pod), None)
    if pod is None:
        return stage.since
    starts = [c.started_at for c in pod.init_containers + pod.containers
              if c.started_at is not None and not c.done and not c.ready]
    starts += [stage.since] if stage.since is not None else []
    return max(starts) if starts else None


def normal_until(pipeline: NodePipeline, stage: PipelineStage, pods: Sequence[PodInfo],
                 thresholds: ThresholdsLike, depth: int = 0) -> float | None:
    """The time until which ``stage`` not being ready is normal; None when unknown.

    A failed stage has no grace (returns None); a stage waiting on another gets at least
    that stage's deadline plus its own grace.
    """
    if stage.status is StageStatus.FAILED or depth > 8:
        return None
    started = attempt_started(stage, pods)
    own = grace_minutes(stage.operand, thresholds) * 60.0
    deadline = started + own if started is not None else None
    dependency = _init_dependency(pipeline, stage)
    if dependency is not None:
        before = normal_until(pipeline, dependency, pods, thresholds, depth + 1)
        if before is not None:
            deadline = max(deadline or 0.0, before + own)
    return deadline


def _init_dependency(pipeline: NodePipeline, stage: PipelineStage) -> PipelineStage | None:
    """The stage whose marker ``stage``'s current init container waits for, ready or not
    (a dependency that just became ready still lends its start-up time)."""
    current = next((s for s in stage.substages
                    if s.status in (StageStatus.PROGRESSING, StageStatus.FAILED)), None)
    operand = WAITS_ON.get(current.name) if current is not None else None
    if not operand or operand == stage.operand:
        return None
    return pipeline.stage(operand)


def clock(epoch: float) -> str:
    """``14:02 UTC``: when an operator should look again."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%H:%M UTC")
