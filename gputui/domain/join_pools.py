"""Time to GPU per pool, and the ``slow-gpu-join`` finding.

Per pool (the node-pool label, :func:`gputui.domain.nodes.pool_of`): count, p50, p90 and max
of the time to GPU over the nodes that joined within a window (7 days by default), the stage
with the longest median share, the nodes still joining and the stragglers. Percentiles are
nearest-rank (the value of a real join, never an interpolation between two).

A node still without an allocatable GPU is slow past its pool's ``p90 x 2``; while the pool
has fewer timed joins than ``slow_join_min_joins`` its p90 says little, so the configured
``slow_join_minutes`` (15 by default) stands in. A node the driver upgrade controller holds
is not joining (the upgrade explains it).

The figures change only when a join does, so :class:`JoinTracker` keeps the joins by node
(each build hands it the views that changed, as to :class:`~gputui.domain.fleet.Fleet`) and
recomputes a pool's figures only when one of its joins changed or left the window.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gputui.domain import catalogue as C
from gputui.domain.join_model import (
    JOIN_COMING,
    JOIN_DONE,
    STAGE_KEYS,
    STAGE_WORDS,
    JoiningNode,
    JoinStraggler,
    NodeJoin,
    PoolJoins,
)
from gputui.domain.model import Finding, NodeView
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_state import in_step

#: defaults of the settings that shape the figures (``gputui.settings`` documents them)
DEFAULT_WINDOW_DAYS = 7.0
DEFAULT_LIMIT_MINUTES = 15.0
DEFAULT_MIN_JOINS = 5


@dataclass(frozen=True, slots=True)
class JoinSettings:
    """What shapes the pool figures: the window, the fallback limit and when p90 counts."""

    window_days: float = DEFAULT_WINDOW_DAYS
    limit_minutes: float = DEFAULT_LIMIT_MINUTES
    min_joins: int = DEFAULT_MIN_JOINS

    @classmethod
    def of(cls, thresholds: object) -> JoinSettings:
        """Read from any thresholds object (missing attributes keep their defaults)."""
        return cls(float(getattr(thresholds, "join_window_days", DEFAULT_WINDOW_DAYS)),
                   float(getattr(thresholds, "slow_join_minutes", DEFAULT_LIMIT_MINUTES)),
                   int(getattr(thresholds, "slow_join_min_joins", DEFAULT_MIN_JOINS)))


def nearest_rank(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of sorted ``values`` (not empty)."""
    rank = max(1, math.ceil(percent / 100.0 * len(values)))
    return values[min(rank, len(values)) - 1]


def _median(values: list[float]) -> float | None:
    return nearest_rank(sorted(values), 50) if values else None


_NO_POOL = PoolJoins("")


@dataclass(frozen=True, slots=True)
class _Figures:
    """A pool's figures from its done joins (the part that does not move with the clock)."""

    count: int
    p50: float | None
    p90: float | None
    max: float | None
    stage_medians: tuple[float | None, ...]
    expires: float  # when the oldest join in the window leaves it
    #: the pool's figures without the nodes slow so far (they move with the clock)
    base: PoolJoins = _NO_POOL
    joining: tuple[JoiningNode, ...] = ()
    limit: float = 0.0


def _figures(joins: Iterable[NodeJoin], now: float, window: float) -> _Figures:
    start = now - window
    timed = [j for j in joins if j.state == JOIN_DONE and j.joined is not None
             and j.joined >= start and j.total is not None]
    totals = sorted(j.total for j in timed if j.total is not None)
    shares: list[list[float]] = [[] for _ in STAGE_KEYS]
    for join in timed:
        for index, share in enumerate(join.stage_seconds()):
            if share is not None:
                shares[index].append(share)
    expires = min((j.joined + window for j in timed if j.joined is not None), default=math.inf)
    if not totals:
        return _Figures(0, None, None, None, tuple(None for _ in STAGE_KEYS), expires)
    return _Figures(len(totals), nearest_rank(totals, 50), nearest_rank(totals, 90),
                    totals[-1], tuple(_median(s) for s in shares), expires)


def _slowest(medians: Sequence[float | None]) -> str:
    known = [(m, key) for key, m in zip(STAGE_KEYS, medians, strict=True) if m is not None]
    return max(known)[1] if known else ""


def _limit(figures: _Figures, settings: JoinSettings) -> tuple[float, str]:
    """Seconds after which a node of the pool still without GPUs is slow, and why."""
    if figures.count >= settings.min_joins and figures.p90 is not None:
        return 2 * figures.p90, f"2 x the pool's p90 of {duration(figures.p90)}"
    limit = 60.0 * settings.limit_minutes
    why = (f"the configured {duration(limit)} (the pool has {figures.count} timed joins, "
           f"fewer than {settings.min_joins:g})")
    return limit, why


def _longest_stage(join: NodeJoin) -> str:
    shares = [(s, key) for key, s in zip(STAGE_KEYS, join.stage_seconds(), strict=True)
              if s is not None]
    return max(shares)[1] if shares else ""


class JoinTracker:
    """The joins of every GPU node by pool, kept by difference."""

    def __init__(self, settings: JoinSettings | None = None) -> None:
        self._settings = settings or JoinSettings()
        self._joins: dict[str, tuple[str, NodeJoin, bool]] = {}  # node -> pool, join, held
        self._pools: dict[str, set[str]] = {}
        self._figures: dict[str, _Figures] = {}

    def fork(self) -> JoinTracker:
        """An independent copy sharing the (immutable) joins and figures."""
        other = JoinTracker(self._settings)
        other._joins, other._figures = dict(self._joins), dict(self._figures)
        other._pools = {pool: set(nodes) for pool, nodes in self._pools.items()}
        return other

    def put(self, name: str, view: NodeView | None) -> None:
        """Node ``name`` now looks like ``view`` (None: gone, or not a GPU node)."""
        old = self._joins.pop(name, None)
        if old is not None:
            self._pools[old[0]].discard(name)
            self._figures.pop(old[0], None)
        if view is None or view.join is None:
            return
        held = in_step(view.upgrade_state)
        self._joins[name] = (view.pool, view.join, held)
        self._pools.setdefault(view.pool, set()).add(name)
        self._figures.pop(view.pool, None)

    def pools(self, now: float) -> tuple[PoolJoins, ...]:
        """Every pool's figures at ``now``, by pool name."""
        return tuple(self._pool(pool, names, now)
                     for pool, names in sorted(self._pools.items()) if names)

    def _pool(self, pool: str, names: set[str], now: float) -> PoolJoins:
        """The pool's figures: its done joins' part is kept until one of its joins changes
        or leaves the window; only the nodes still joining are looked at again (their
        time so far moves with the clock)."""
        static = self._figures.get(pool)
        if static is None or now >= static.expires:
            static = self._static(pool, names, now)
            self._figures[pool] = static
        late = [JoinStraggler(j.node, now - j.since, j.stage, True) for j in static.joining
                if now - j.since > static.limit]
        return replace(static.base, stragglers=tuple(sorted(
            late + list(static.base.stragglers), key=lambda s: (-s.seconds, s.node))))

    def _static(self, pool: str, names: set[str], now: float) -> _Figures:
        window = 86400.0 * self._settings.window_days
        figures = _figures((self._joins[n][1] for n in names), now, window)
        limit, limit_from = _limit(figures, self._settings)
        done_limit = (2 * figures.p50 if figures.p50 and figures.count >= self._settings.min_joins
                      else limit)
        joining, stragglers, unknown = [], [], 0
        for name in sorted(names):
            _, join, held = self._joins[name]
            if join.state == JOIN_COMING and join.joined is not None and not held:
                joining.append(JoiningNode(name, join.stage, join.joined))
            elif join.state == JOIN_DONE and join.total is not None and join.joined is not None:
                if join.total > done_limit and join.joined >= now - window:
                    stragglers.append(JoinStraggler(name, join.total, _longest_stage(join),
                                                    False))
            elif join.state != JOIN_COMING:
                unknown += 1
        base = PoolJoins(
            pool=pool, count=figures.count, p50=figures.p50, p90=figures.p90, max=figures.max,
            slowest_stage=_slowest(figures.stage_medians), stage_medians=figures.stage_medians,
            limit=limit, limit_from=limit_from, stragglers=tuple(stragglers),
            joining=tuple(sorted(joining, key=lambda j: (j.since, j.node))),
            unknown=unknown, nodes=tuple(sorted(names)), window_days=self._settings.window_days)
        return replace(figures, base=base, joining=base.joining, limit=limit)


def slow_join_findings(pools: Sequence[PoolJoins], views: Mapping[str, NodeView],
                       now: float) -> list[Finding]:
    """``slow-gpu-join`` for each node still joining past its pool's limit."""
    found: list[Finding] = []
    for pool in pools:
        for straggler in pool.stragglers:
            if straggler.joining:
                found.append(_finding(pool, straggler, views.get(straggler.node), now))
    return found


def _finding(pool: PoolJoins, straggler: JoinStraggler, view: NodeView | None,
             now: float) -> Finding:
    stage = STAGE_WORDS.get(straggler.stage, straggler.stage)
    doing = view.coming_up.what if view is not None and view.coming_up is not None else ""
    name = pool.pool or "(no pool)"
    usual = (f"pool {name} usually takes {duration(pool.p50)} (p90 {duration(pool.p90)}, "
             f"{pool.count} joins)" if pool.p50 is not None and pool.p90 is not None
             else f"pool {name} has no timed join yet")
    message = (f"no allocatable GPU {duration(straggler.seconds)} after joining, stuck before "
               f"'{stage}'" + (f" ({doing})" if doing else "")
               + f"; {usual}; slow past {pool.limit_from}")
    hint = (f"look at the {straggler.stage} stage in the pipeline (d) and its pod's log; "
            "autoscalers and job queues that expect GPUs sooner count this scale-up as failed")
    return C.finding(C.SLOW_GPU_JOIN, straggler.node, message, hint, subject=straggler.stage)


__all__ = ["JoinSettings", "JoinTracker", "nearest_rank", "slow_join_findings"]
