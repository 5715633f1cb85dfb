"""``ScreenFeed``: what the app hands the screen shown (the snapshot, the metrics, the
greyed actions, the operations, the timeline) and the header's two lines.

Why one object: a screen must be given the newest of everything whenever it becomes the one
shown (a view switch, a jump, ``:ctx``) and each time something new arrives, and the header
redraws from the same state every second. The app keeps the state (``snapshot``,
``metrics``, ``status``); this is the one place that hands it down, so a new kind of thing
shown is added here once, not at every caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.css.query import NoMatches
from textual.screen import Screen

from gputui.domain.metrics import EMPTY_METRICS, MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.sources.base import SourceStatus
from gputui.ui.action_flow import ActionFlow
from gputui.ui.app_host import AppSurface
from gputui.ui.context_switch import ContextSwitch
from gputui.ui.contracts import MetricsView, SnapshotView
from gputui.ui.operations_flow import OperationsFlow
from gputui.ui.recording_watch import RecordingWatch
from gputui.ui.timeline_flow import TimelineFlow
from gputui.ui.widgets.status_header import visible_headers


class FeedHost(AppSurface, Protocol):
    """What of the app is handed down: its state and the flows that show part of it."""

    snapshot: ClusterSnapshot
    metrics: MetricsReading
    status: SourceStatus
    clock: Callable[[], float]
    actions: ActionFlow
    operation_flow: OperationsFlow
    timelines: TimelineFlow
    contexts: ContextSwitch
    recording_watch: RecordingWatch

    @property
    def recording(self) -> bool: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...


class ScreenFeed:
    """Hands the app's state to the screen shown and to the headers."""

    def __init__(self, host: FeedHost) -> None:
        self.host = host

    def deliver(self, screen: Screen[Any]) -> None:
        """Give ``screen``, if it is still the one shown, everything it shows."""
        host = self.host
        if screen is not host.screen or not screen.is_mounted:
            return
        host.actions.hand_down_blocks((screen,))
        if isinstance(screen, SnapshotView):
            try:
                screen.show_snapshot(host.snapshot, host.clock())
            except NoMatches:  # not composed yet: the screen-change callback retries
                host.call_after_refresh(self.deliver, screen)
                return
        if isinstance(screen, MetricsView) and host.metrics is not EMPTY_METRICS:
            screen.show_metrics(host.metrics, host.clock())
        host.operation_flow.show_on(screen)
        host.timelines.show_on(screen)
        self.refresh_header()

    def metrics(self, reading: MetricsReading) -> None:
        """A new metrics reading: the screen shown (when it shows metrics) and the header."""
        host = self.host
        host.metrics = reading
        if host.screen_stack and isinstance(host.screen, MetricsView):
            try:
                host.screen.show_metrics(reading, host.clock())
            except NoMatches:  # not composed, or taken apart on the way out: deliver
                pass  # hands it the reading when it is shown
        self.refresh_header()

    def refresh_header(self) -> None:
        """Redraw every visible header from the app's state (every second, and on news)."""
        host = self.host
        if not host.screen_stack:
            return
        stopped = host.recording_watch.stopped(
            lambda why: host.notify(why, severity="error", timeout=30))
        for header in visible_headers(host.screen_stack):
            header.update_state(host.snapshot, host.status, host.clock(),
                                host.metrics.fleet,
                                running=host.operation_flow.operations.running(),
                                read_only=host.contexts.read_only,
                                recording=host.recording, recording_stopped=stopped)
