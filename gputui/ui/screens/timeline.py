"""``TimelineScreen`` (``:timeline``): what changed and when, newest first.

The app hands it the timeline's events (:meth:`TimelineScreen.show_timeline`, the
``TimelineView`` contract) whenever they change and when the view is shown; the screen only
filters and draws them. ``/`` filters by free text (node, text, user, kind), the node list's
timeline key opens it on one node (:meth:`show_node`), ``esc`` clears either. Rows are keyed
by the event, so the cursor stays on the event being read as newer ones arrive above it;
the selected event is shown in full below the table, since a row at 80 columns cuts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import Input, Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.domain.timeline_event import TimelineEvent
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import TimelineView, fulfils
from gputui.ui.render.timeline import (
    COLUMNS,
    TimelineFilter,
    clock_time,
    detail_text,
    empty_text,
    event_cells,
    keyed_events,
    view_line,
)
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.palette_mixin import widget_palette
from gputui.ui.widgets.sortable_text import SortableText

#: the most events drawn at once (the newest; the view line says when there are more)
MAX_ROWS = 1000
#: columns a table row spends beyond its cells (padding of each cell, the scrollbar)
_CHROME = 2 * len(COLUMNS) + 2


class TimelineTable(LineTable):
    """The events, newest first (each time cell carries its place: newest, then key); a
    line table, so a frame draws the events on screen, not the thousand kept."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sort_columns = ("time",)

    def on_mount(self) -> None:
        for key, label, _ in COLUMNS:
            self.add_column(key, label)


@fulfils(TimelineView)
class TimelineScreen(GpuScreen):
    """The incident timeline, newest first, filterable by node and text."""

    VIEW = "timeline"
    DEFAULT_CLASSES = "timeline-screen"
    BINDINGS = bindings_for("timeline")

    def __init__(self) -> None:
        super().__init__()
        self.context = ""
        self.now = 0.0
        self.since: float | None = None
        self.dropped = 0
        self.filter = TimelineFilter()
        self.events: Sequence[TimelineEvent] = ()
        self._shown: dict[str, TimelineEvent] = {}
        self._width = 0

    def compose_body(self) -> Iterable[Widget]:
        yield Input(placeholder="filter: node or words (all must match; esc clears)",
                    id="timeline-filter", classes="hidden")
        yield Static(id="timeline-view-line")
        yield TimelineTable(id="timeline-table")
        yield Static(id="timeline-empty", classes="hidden")
        yield Static(id="timeline-detail")

    def on_mount(self) -> None:
        self.table.focus()
        self._draw()

    @property
    def table(self) -> TimelineTable:
        """The events table."""
        return self.query_one("#timeline-table", TimelineTable)

    @property
    def selected(self) -> TimelineEvent | None:
        """The event under the cursor."""
        return self._shown.get(self.table.current_key or "")

    # ------------------------------------------------------------------ fed by the app
    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Only the context's name and the clock: the events come by :meth:`show_timeline`."""
        self.context = snapshot.context
        self.now = now

    def show_timeline(self, events: Sequence[TimelineEvent], since: float | None,
                      dropped: int, now: float) -> None:
        """Every event kept, newest first; ``since``: when watching began."""
        self.events, self.since, self.dropped, self.now = events, since, dropped, now
        if self.is_mounted:
            self._draw()

    def show_node(self, node_name: str | None) -> None:
        """Show only ``node_name``'s events (the node list's timeline key)."""
        self._set_filter(TimelineFilter(node_name, ""))
        self.query_one("#timeline-filter", Input).value = ""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the timeline is built from snapshots and the audit log."""

    def selected_nodes(self) -> Selection:
        """The node of the event under the cursor (none for a cluster-wide event)."""
        event = self.selected if self.is_mounted else None
        if event is None:
            return Selection(why_none="no event is selected")
        return Selection.of((event.node,), "the selected event is about the cluster, "
                            "not a node")

    # ------------------------------------------------------------------ drawing
    def _draw(self) -> None:
        matching = [e for e in self.events if self.filter.matches(e)]
        self._shown = keyed_events(matching[:MAX_ROWS])
        palette = widget_palette(self)
        what_width = self._what_width(self._shown.values())
        rows: dict[str, dict[str, Text]] = {}
        total = len(self.events)
        for index, (key, event) in enumerate(self._shown.items()):
            cells = event_cells(event, self.now, palette)
            cells["what"].truncate(what_width, overflow="ellipsis")
            # newest first; at the same time, the later seen first (its place from the oldest)
            place = (-event.at, index - total)
            time_cell = SortableText("", place, style=cells["time"].style)
            time_cell.append_text(cells["time"])
            rows[key] = {**cells, "time": time_cell}
        current = self.table.current_key
        self.table.show_rows(rows)
        self.table.move_to_key(current)  # the event it was on, if still shown
        line = view_line(len(matching), len(self.events), self.since, self.dropped,
                         self.filter, self.now)
        if len(matching) > MAX_ROWS:
            line += f" │ newest {MAX_ROWS} shown"
        self.query_one("#timeline-view-line", Static).update(line)
        empty = self.query_one("#timeline-empty", Static)
        empty.set_class(bool(rows), "hidden")
        self.table.set_class(not rows, "hidden")
        if not rows:
            empty.update(empty_text(self.context, self.since, self.now, self.filter))
        self._show_detail()

    def _what_width(self, events: Iterable[TimelineEvent]) -> int:
        """Room left for the WHAT column once time, node and who are drawn."""
        chosen = list(events)
        times = max((len(clock_time(e.at, self.now)) for e in chosen), default=8)
        nodes = max((min(len(e.node or "cluster"), 18) for e in chosen), default=7)
        who = max((len(e.who) for e in chosen), default=0)
        width = self.table.size.width or self.app.size.width
        return max(20, width - times - max(nodes, 4) - max(who, 3) - _CHROME)

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._width = self.size.width
            self._draw()

    @on(LineTable.CursorMoved, "#timeline-table")
    def _show_detail(self) -> None:
        self.query_one("#timeline-detail", Static).update(
            detail_text(self.selected, widget_palette(self)))

    # ------------------------------------------------------------------ filter
    def _set_filter(self, wanted: TimelineFilter) -> None:
        if wanted != self.filter:
            self.filter = wanted
            if self.is_mounted:
                self._draw()

    def action_filter(self) -> None:
        """``/``: type words to filter by (within the node chosen, if any)."""
        prompt = self.query_one("#timeline-filter", Input)
        prompt.remove_class("hidden")
        prompt.focus()

    @on(Input.Changed, "#timeline-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self._set_filter(TimelineFilter(self.filter.node, event.value))

    @on(Input.Submitted, "#timeline-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#timeline-filter", Input).add_class("hidden")
        self.table.focus()

    def go_back(self) -> bool:
        """``esc``: close the prompt and clear the filter (text and node); True if it did."""
        prompt = self.query_one("#timeline-filter", Input)
        was_open = not prompt.has_class("hidden")
        prompt.add_class("hidden")
        prompt.value = ""
        self.table.focus()
        if self.filter:
            self._set_filter(TimelineFilter())
            return True
        return was_open
