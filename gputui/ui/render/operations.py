"""Operations as text: the header's running line, ``:ops`` rows and one operation in full.

Plain functions over :class:`~gputui.actions.operations.Operation` (no Textual), so tests
and snapshots call them without an app. State is always a symbol and a word; colour only
adds emphasis (the palette's roles).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from rich.text import Text

from gputui.actions.operations import Operation, OpState, short_targets
from gputui.ui.render.style import PLAIN, Palette

STATE_SYMBOL: Mapping[OpState, str] = MappingProxyType({
    OpState.RUNNING: "⟳", OpState.DONE: "✔", OpState.FAILED: "✖",
    OpState.STOPPED: "■", OpState.INTERRUPTED: "▲",
})
STATE_ROLE: Mapping[OpState, str] = MappingProxyType({
    OpState.RUNNING: "progress", OpState.DONE: "ok", OpState.FAILED: "crit",
    OpState.STOPPED: "warn", OpState.INTERRUPTED: "warn",
})
#: the node list's mark for a node an operation works on (the mark column)
BUSY_MARK = "⟳"


def clock_text(epoch: float) -> str:
    """``14:02:11`` in local time (what the header's clock says too)."""
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def state_text(op: Operation, palette: Palette = PLAIN) -> Text:
    """``⟳ running`` / ``■ stopped``...; ``⟳ stopping`` once a stop was asked."""
    word = "stopping" if op.running and op.stopping else op.state.value
    return Text(f"{STATE_SYMBOL[op.state]} {word}", style=palette.role(STATE_ROLE[op.state]))


def running_line(running: Sequence[Operation], width: int, palette: Palette = PLAIN) -> Text:
    """The header's line while operations run: ``⟳ 1 running: drain svxj 3/5 evicted, ...``.

    Newest first; when the words do not fit ``width`` the ``running`` word goes, then the
    line is cut with an ellipsis (the count and the newest operation's head stay).
    """
    glances = "; ".join(op.glance() for op in running)
    text = f"⟳ {len(running)} running: {glances}"
    if len(text) > width:
        text = f"⟳ {len(running)}: {glances}"
    line = Text(text, style=palette.role("progress"), no_wrap=True)
    line.truncate(width, overflow="ellipsis")
    return line


def now_text(op: Operation) -> str:
    """What the ``:ops`` row says of it now: the glance while it runs, else the result."""
    if op.result is not None:
        return op.result.summary
    return op.now()


def row_cells(op: Operation, palette: Palette = PLAIN) -> tuple[Text, Text, Text, Text]:
    """(state, started, operation, now) cells of one ``:ops`` row; the operation is its
    verb and short target (the full title is in the detail below the table)."""
    name = f"{op.verb} {short_targets(op.targets)}"
    return (state_text(op, palette), Text(clock_text(op.started)),
            Text(name, no_wrap=True), Text(now_text(op), no_wrap=True))


def pods_of(op: Operation) -> tuple[str, ...]:
    """The pods its plan evicts (``ns/name``), in plan order."""
    return tuple(f"{c.namespace}/{c.name}" for c in op.plan.changes
                 if c.verb == "create" and c.kind == "Pod")


def detail_text(op: Operation, palette: Palette = PLAIN) -> Text:
    """One operation in full under the ``:ops`` table: id, targets, pods, live lines."""
    text = Text.assemble((op.title, "bold"), "  ", state_text(op, palette))
    text.append(f"\nid {op.id} · started {clock_text(op.started)} · targets "
                f"{', '.join(op.targets) or 'the cluster'}")
    pods = pods_of(op)
    if pods:
        text.append(f"\nPods ({len(pods)}): {', '.join(pods)}")
    for line in op.lines:
        text.append("\n  ")
        text.append(line)
    return text
