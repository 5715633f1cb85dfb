"""Time to GPU: the frozen shapes of a node's join and of a pool's join figures.

Split from :mod:`gputui.domain.model` (which re-exports these names) so that the join rules
(:mod:`gputui.domain.joins`, :mod:`gputui.domain.join_pools`) and the model share them
without an import cycle. Times are epoch seconds, durations seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the pipeline's stages on the way to an allocatable GPU, in order: (key, what ends it).
#: The keys are the ``check --json`` contract (``slowest_stage``, ``stage``).
JOIN_STAGES: tuple[tuple[str, str], ...] = (
    ("driver", "driver ready"),
    ("toolkit", "toolkit ready"),
    ("validations", "validations done"),
    ("device-plugin", "device plugin registered"),
)
STAGE_KEYS: tuple[str, ...] = tuple(key for key, _ in JOIN_STAGES)
STAGE_WORDS: dict[str, str] = dict(JOIN_STAGES)

#: a join whose time is known (GPUs allocatable, the moment recorded or observed)
JOIN_DONE = "done"
#: a join in progress: the node has no allocatable GPU yet
JOIN_COMING = "joining"
#: what the cluster records does not time this join (it predates them, or they were
#: rewritten since): shown as unknown, never estimated
JOIN_UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class NodeJoin:
    """One GPU node's way from joining to its first allocatable GPU.

    Attributes:
        state: :data:`JOIN_DONE`, :data:`JOIN_COMING` or :data:`JOIN_UNKNOWN`.
        joined: the node's ``metadata.creationTimestamp`` (None when it has none).
        stage_ends: per stage of :data:`JOIN_STAGES`, when it ended (None: not yet, or
            not recorded).
        allocatable_at: when GPUs became allocatable (None unless ``done``).
        observed: ``allocatable_at`` is gputui's own observation (it watched the node go
            from no allocatable GPU to some), not a time the cluster recorded.
        stage: the stage a joining node is in (a key of :data:`JOIN_STAGES`), "" otherwise.
        why_unknown: for ``unknown``, what keeps the join from being timed.
    """

    state: str
    joined: float | None = None
    stage_ends: tuple[float | None, ...] = (None, None, None, None)
    allocatable_at: float | None = None
    observed: bool = False
    stage: str = ""
    why_unknown: str = ""

    @property
    def total(self) -> float | None:
        """Seconds from join to allocatable GPUs, None unless the join is done."""
        if self.allocatable_at is None or self.joined is None:
            return None
        return max(0.0, self.allocatable_at - self.joined)

    def elapsed(self, now: float) -> float | None:
        """Seconds a joining node has been at it (None when not joining)."""
        if self.state != JOIN_COMING or self.joined is None:
            return None
        return max(0.0, now - self.joined)

    def stage_seconds(self) -> tuple[float | None, ...]:
        """Each stage's own share: its end minus the latest earlier end (the join itself
        for the first), never below 0 (the validator and the device plugin overlap)."""
        shares: list[float | None] = []
        start = self.joined
        for end in self.stage_ends:
            if end is None or start is None:
                shares.append(None)
            else:
                shares.append(max(0.0, end - start))
                start = max(start, end)
        return tuple(shares)


@dataclass(frozen=True, slots=True)
class JoinStraggler:
    """A node of a pool well past its pool's usual time to GPU.

    Attributes:
        node: its name.
        seconds: its time to GPU (done) or the time it has been at it (joining).
        stage: the stage it is in (joining) or that took it longest (done).
        joining: it still has no allocatable GPU.
    """

    node: str
    seconds: float
    stage: str
    joining: bool


@dataclass(frozen=True, slots=True)
class JoiningNode:
    """A node of the pool still on its way to an allocatable GPU."""

    node: str
    stage: str
    since: float


@dataclass(frozen=True, slots=True)
class PoolJoins:
    """A pool's time to GPU over the nodes that joined within the window.

    Attributes:
        pool: the pool's name ("" for nodes without a pool label).
        count: timed joins in the window (the figures rest on these).
        p50 / p90 / max: seconds, nearest-rank percentiles; None when ``count`` is 0.
        slowest_stage: the stage with the longest median share, "" when none is known.
        stage_medians: per stage of :data:`JOIN_STAGES`, its median share (None unknown).
        limit: seconds after which a node of this pool still without GPUs is slow
            (``p90 x 2``, or the configured limit while the pool has too few joins).
        limit_from: where ``limit`` comes from, in words.
        stragglers: nodes well past the pool's usual time, slowest first.
        joining: nodes still on their way, longest first.
        unknown: GPU nodes of the pool whose join cannot be timed.
        nodes: every GPU node of the pool, by name.
        window_days: the window the figures are taken over.
    """

    pool: str
    count: int = 0
    p50: float | None = None
    p90: float | None = None
    max: float | None = None
    slowest_stage: str = ""
    stage_medians: tuple[float | None, ...] = (None, None, None, None)
    limit: float = 0.0
    limit_from: str = ""
    stragglers: tuple[JoinStraggler, ...] = ()
    joining: tuple[JoiningNode, ...] = ()
    unknown: int = 0
    nodes: tuple[str, ...] = ()
    #: the window the figures are taken over, in days
    window_days: float = 7.0
