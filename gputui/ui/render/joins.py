"""Time to GPU in words and cells: the ``:joins`` view's rows and the describe pane's value.

Pure functions of the snapshot and a clock, so tests call them without an app. A join that
cannot be timed reads ``? unknown`` (with why), never a figure; a node still joining reads
its stage and how long it has been at it.
"""

from __future__ import annotations

from rich.text import Text

from gputui.domain.join_model import (
    JOIN_COMING,
    JOIN_DONE,
    STAGE_KEYS,
    STAGE_WORDS,
    NodeJoin,
    PoolJoins,
)
from gputui.domain.model import NodeView
from gputui.domain.timefmt import duration
from gputui.ui.render.style import PLAIN, UNKNOWN_ROLE, UNKNOWN_WORD, Palette

#: the pools table's columns: (key, label)
POOL_COLUMNS = (("pool", "POOL"), ("count", "JOINS"), ("p50", "P50"), ("p90", "P90"),
                ("max", "MAX"), ("slowest", "SLOWEST STAGE"), ("now", "NOW"))
#: the nodes table's columns: (key, label)
NODE_COLUMNS = (("node", "NODE"), ("state", "TIME TO GPU"),
                ("stage", "STAGE / SHARES"))
#: short stage names where columns are narrow
STAGE_SHORT = {"driver": "driver", "toolkit": "toolkit", "validations": "valid.",
               "device-plugin": "plugin"}


def _figure(seconds: float | None) -> str:
    return duration(seconds) if seconds is not None else "—"


def pool_cells(pool: PoolJoins, now: float, palette: Palette = PLAIN) -> dict[str, Text]:
    """One pool's row: its figures, its slowest stage and what is happening now."""
    slow = [s for s in pool.stragglers if s.joining]
    if slow:
        state = Text(f"▲ {len(slow)} slow", style=palette.role("warn"))
    elif pool.joining:
        state = Text(f"◐ {len(pool.joining)} joining", style=palette.role("progress"))
    else:
        state = Text("")
    return {
        "pool": Text(pool.pool or "(no pool)"),
        "count": Text(str(pool.count)),
        "p50": Text(_figure(pool.p50)),
        "p90": Text(_figure(pool.p90)),
        "max": Text(_figure(pool.max)),
        "slowest": Text(STAGE_WORDS.get(pool.slowest_stage, "—") if pool.slowest_stage
                        else "—"),
        "now": state,
    }


def node_state(join: NodeJoin | None, now: float, limit: float | None = None,
               palette: Palette = PLAIN) -> Text:
    """``6 min``, ``◐ 3 min so far`` (``▲`` past the pool's limit) or ``? unknown``."""
    if join is None:
        return Text("—")
    if join.state == JOIN_DONE and join.total is not None:
        return Text(duration(join.total) + (" (seen)" if join.observed else ""))
    elapsed = join.elapsed(now)
    if join.state == JOIN_COMING and elapsed is not None:
        slow = limit is not None and elapsed > limit
        return Text(f"{'▲' if slow else '◐'} {duration(elapsed)} so far",
                    style=palette.role("warn" if slow else "progress"))
    return Text(UNKNOWN_WORD, style=palette.role(UNKNOWN_ROLE))


def stage_shares(join: NodeJoin | None) -> str:
    """Each stage's share: ``4 min / 12 s / 31 s / 0 s`` (``—`` where not recorded)."""
    if join is None or join.state != JOIN_DONE:
        return ""
    return " / ".join(_figure(s) for s in join.stage_seconds())


def node_cells(name: str, join: NodeJoin | None, now: float, limit: float | None,
               palette: Palette = PLAIN) -> dict[str, Text]:
    """One node's row in the selected pool: the stage a joining node waits for, each
    stage's share of a timed join, or why a join cannot be timed."""
    stage = ""
    if join is not None and join.state == JOIN_COMING:
        stage = "→ " + STAGE_WORDS.get(join.stage, join.stage)
    elif join is not None and join.state == JOIN_DONE:
        stage = stage_shares(join)
    elif join is not None:
        stage = join.why_unknown
    return {"node": Text(name), "state": node_state(join, now, limit, palette),
            "stage": Text(stage, no_wrap=True)}


def pool_summary(pool: PoolJoins | None) -> Text:
    """The line under the pools: what the selected pool's figures rest on, and its limit."""
    if pool is None:
        return Text("no GPU node has joined yet (joins are timed from node creation to "
                    "allocatable GPUs)")
    text = Text(f"{pool.pool or '(no pool)'}: {pool.count} joins in {pool.window_days:g} d")
    if pool.unknown:
        text.append(f", {pool.unknown} untimed")
    limit = "2 x p90" if pool.limit_from.startswith("2 x") else "configured"
    text.append(f"; slow past {duration(pool.limit)} ({limit}); enter: nodes")
    medians = [f"{STAGE_SHORT[k]} {_figure(m)}" for k, m
               in zip(STAGE_KEYS, pool.stage_medians, strict=True)]
    text.append("\nmedian: " + " · ".join(medians))
    return text


def join_value(node: NodeView, now: float, palette: Palette = PLAIN) -> Text:
    """The describe pane's ``join`` value: time to GPU with each stage's share, the stage
    a joining node is in and for how long, or why its join cannot be timed."""
    join = node.join
    if join is None:
        return Text("—")
    if join.state == JOIN_DONE and join.total is not None:
        text = Text(f"GPUs allocatable {duration(join.total)} after joining", style="bold")
        shares = [f"{STAGE_SHORT[k]} {_figure(s)}" for k, s
                  in zip(STAGE_KEYS, join.stage_seconds(), strict=True)]
        text.append(" (" + " · ".join(shares) + ")")
        if join.observed:
            text.append(" · seen by gputui", style=palette.role("muted"))
        return text
    elapsed = join.elapsed(now)
    if join.state == JOIN_COMING and elapsed is not None:
        return Text(f"◐ joining for {duration(elapsed)}, waiting for "
                    f"{STAGE_WORDS.get(join.stage, join.stage)}", style=palette.role("progress"))
    return Text(f"{UNKNOWN_WORD}: {join.why_unknown}", style=palette.role(UNKNOWN_ROLE))
