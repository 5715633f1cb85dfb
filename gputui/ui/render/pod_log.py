"""A pod's events and the pod-log screen's heading, as plain Rich renderables.

Events come as reduced Kubernetes Event dicts (``gputui.sources.pods``); ages are computed
against the app clock passed in, never the wall clock, so screenshots stay frozen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from gputui.domain.kube import parse_time
from gputui.domain.timefmt import duration
from gputui.ui.render.style import PLAIN, Palette


def event_time(event: Mapping[str, Any]) -> float | None:
    """The most recent time an event carries (last, event, first, creation)."""
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        when = parse_time(event.get(key))
        if when is not None:
            return when
    metadata = event.get("metadata") or {}
    return parse_time(metadata.get("creationTimestamp")) if isinstance(metadata, Mapping) else None


def render_events(events: Sequence[Mapping[str, Any]], now: float,
                  palette: Palette = PLAIN) -> RenderableType:
    """Events oldest first: type (word, so ``NO_COLOR`` still shows Warning), reason, age,
    count, message. An empty list says so rather than showing an empty table."""
    if not events:
        return Text("no events for this pod (events expire after about an hour)",
                    style=palette.role("muted"))
    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=True)
    table.add_column("type", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("age", justify="right", no_wrap=True)
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("message", ratio=1, overflow="fold")
    for event in events:
        kind = str(event.get("type") or "Normal")
        when = event_time(event)
        style = palette.role("warn") if kind == "Warning" else ""
        table.add_row(Text(("▲ " if kind == "Warning" else "  ") + kind, style=style),
                      str(event.get("reason") or ""),
                      duration(now - when) if when is not None else "",
                      str(event.get("count") or 1), str(event.get("message") or ""))
    return table


def heading(namespace: str, pod: str, container: str | None,
            containers: Sequence[str | None], palette: Palette = PLAIN) -> Text:
    """Two lines: ``pod ns/name``, then the container and the others ``c`` cycles through."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("pod ", style=palette.role("muted"))
    text.append(f"{namespace}/{pod}", style="bold")
    text.append("\ncontainer ", style=palette.role("muted"))
    text.append(container or "(default)", style="bold")
    others = [c or "(default)" for c in containers if c != container]
    if others:
        text.append(f"   c: switch to {', '.join(others)}", style=palette.role("muted"))
    return text


def status_line(loading: bool, error: str, lines: int, container: str | None,
                palette: Palette = PLAIN, wrap: bool = True,
                search: tuple[str, int, int] = ("", -1, 0)) -> Text:
    """Loading, the one-line error, or how many lines were read, whether they wrap and
    where the search (text, match shown, matches) stands."""
    if loading:
        return Text(f"◐ loading log of {container or 'the default container'}…",
                    style=palette.role("progress"))
    if error:
        return Text(f"✖ could not read the log: {error}   r: retry", style=palette.role("crit"))
    if not lines:
        return Text("the container has written no log lines yet", style=palette.role("muted"))
    text, shown, found = search
    if text:
        where = (f"match {shown + 1} of {found} for {text!r}   n: next" if found
                 else f"no match for {text!r}")
        return Text(f"{where}   /: search again", style=palette.role("muted"))
    return Text(f"{lines} lines, newest last   r: reload   w: "
                f"{'wrap off' if wrap else 'wrap on'}   /: search", style=palette.role("muted"))
