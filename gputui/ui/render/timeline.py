"""The ``:timeline`` view in cells and lines: pure functions of the events and a clock.

Times are UTC (``14:02:11``; ``Nov 30 14:02:11`` when not today), as the audit log and the
handoff summary write them, so a time read off the screen can be found in either. A long
node name keeps its end (``…pool-7f3a-svxj``): that is what tells nodes of a pool apart.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from gputui.domain.timeline_event import TimelineEvent
from gputui.ui.render.style import PLAIN, SEVERITY_SYMBOL, Palette

#: the table's columns: (key, label, width; 0 takes the room left)
COLUMNS = (("time", "TIME", 15), ("node", "NODE", 18), ("what", "WHAT", 0),
           ("who", "WHO", 10))
#: what is watched, as the empty view and README say it
WATCHED = ("findings raised and cleared, Ready/NotReady, cordons, upgrade states, MIG "
           "changes, operand restarts, XIDs and actions (with who)")
#: kinds whose event is good news (shown in the ok colour)
_GOOD = {"cleared"}


@dataclass(frozen=True)
class TimelineFilter:
    """What the view shows: one node's events (from the node list), and free text terms
    that must all be found in the node, the text, the user or the kind."""

    node: str | None = None
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.node or self.text.strip())

    def matches(self, event: TimelineEvent) -> bool:
        if self.node is not None and event.node != self.node:
            return False
        terms = self.text.lower().split()
        if not terms:
            return True
        hay = f"{event.node or 'cluster'} {event.text} {event.who} {event.kind}".lower()
        return all(term in hay for term in terms)

    def words(self) -> str:
        """``node gpu-3, text xid``: the view line's account of the filter."""
        parts = [f"node {self.node}"] if self.node else []
        if self.text.strip():
            parts.append(f"filter: {self.text.strip()}")
        return ", ".join(parts)


def clock_time(at: float, now: float) -> str:
    """``14:02:11`` today (UTC), ``Nov 30 14:02:11`` another day."""
    then = time.gmtime(at)
    if then[:3] == time.gmtime(now)[:3]:
        return time.strftime("%H:%M:%S", then)
    return time.strftime("%b %d %H:%M:%S", then)


def short_name(name: str, width: int) -> str:
    """``name`` in ``width`` columns, keeping its end."""
    return name if len(name) <= width else "…" + name[-(width - 1):]


def event_cells(event: TimelineEvent, now: float, palette: Palette = PLAIN,
                node_width: int = 18) -> dict[str, Text]:
    """One event's row: time, node (``cluster`` for none), what (with the severity's
    symbol and colour), who."""
    if event.severity is not None:
        what = Text(f"{SEVERITY_SYMBOL[event.severity]} {event.text}",
                    style=palette.severity(event.severity))
    else:
        what = Text(event.text, style=palette.role("ok") if event.kind in _GOOD else "")
    node = Text(short_name(event.node, node_width) if event.node else "cluster",
                style="" if event.node else palette.role("muted"))
    return {"time": Text(clock_time(event.at, now)), "node": node, "what": what,
            "who": Text(event.who)}


def _key(event: TimelineEvent) -> str:
    return f"{event.at!r}|{event.kind}|{event.node}|{event.text}|{event.who}"


def empty_text(context: str, since: float | None, now: float, filtered: TimelineFilter) -> str:
    """What the view says instead of a blank pane."""
    if since is None:
        return ("Waiting for the first full read of the cluster: changes are recorded from "
                f"then on ({WATCHED}).")
    where = f" {context}" if context else ""
    if filtered:
        return (f"No event matches ({filtered.words()}) since {clock_time(since, now)} UTC; "
                "esc clears the filter.")
    return (f"Watching{where} since {clock_time(since, now)} UTC: {WATCHED}. Nothing has "
            "changed yet.")


def view_line(shown: int, total: int, since: float | None, dropped: int,
              filtered: TimelineFilter, now: float) -> str:
    """``12/40 events since 14:02:11 │ node gpu-3 │ oldest 5 dropped (cap)``."""
    noun = "event" if total == 1 else "events"
    count = f"{shown}/{total} {noun}" if filtered else f"{total} {noun}"
    parts = [count + (f" since {clock_time(since, now)} UTC" if since is not None else "")]
    if filtered:
        parts.append(filtered.words())
    if dropped:
        parts.append(f"oldest {dropped} dropped (kept: the newest {total})")
    return " │ ".join(parts)


def detail_text(event: TimelineEvent | None, palette: Palette = PLAIN) -> Text:
    """The selected event in full: its node and whole text (a row cuts them at 80
    columns)."""
    if event is None:
        return Text("")
    line = Text.assemble((event.node or "cluster", "bold"), ": ")
    line.append(event.text, style=palette.severity(event.severity) if event.severity
                else "")
    if event.who:
        line.append(f" (by {event.who})")
    return line


def keyed_events(events: Sequence[TimelineEvent]) -> dict[str, TimelineEvent]:
    """``events`` (newest first, as given) keyed by what each event is, so a row keeps its
    key (and the cursor its row) as newer events arrive above it; a repeat of the same
    event gets ``#2``, ``#3``."""
    found: dict[str, TimelineEvent] = {}
    for event in events:
        key = base = _key(event)
        repeat = 1
        while key in found:
            repeat += 1
            key = f"{base}#{repeat}"
        found[key] = event
    return found
