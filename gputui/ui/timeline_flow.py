"""``TimelineFlow``: the app keeps the incident timeline and hands it to ``:timeline``.

A plain object the app holds (like :class:`~gputui.ui.summary_flow.SummaryFlow`). Each applied
snapshot is compared with the one before (:func:`gputui.domain.timeline.derive_events`; the
first full one of a cluster is the baseline, loading ones are skipped); actions come from
the audit log, as it is the record of who did what: at the first snapshot, this cluster's
operations of the last hour (by the server URL and ``kube-system`` UID their intent lines
name, not by context name: :mod:`gputui.domain.cluster_id`), then each operation's lines as
it ends (read in a thread: the log's end may be megabytes). Every new batch goes to
:attr:`TimelineFlow.sink` (a recording), and the view is redrawn when it is the one shown.

A replay gives the events instead (:meth:`TimelineFlow.given`): from then on
nothing is derived, so the view shows exactly what was recorded.

Clocks: events are on the source's clock (emulated in ``--demo``); the audit log writes the
wall clock, so its times are moved by the difference between the two when read.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from textual.screen import Screen

from gputui.actions.audit_read import read_audit
from gputui.domain.cluster_id import ClusterId, cluster_id
from gputui.domain.model import ClusterSnapshot
from gputui.domain.operations import AuditedOperation, pair_operations
from gputui.domain.timeline import Timeline, TimelineEvent, action_events, derive_events
from gputui.settings import Settings
from gputui.ui.app_host import AppSurface
from gputui.ui.contracts import TimelineView

#: how far back the audit log's actions are taken when watching starts (seconds)
ACTIONS_WINDOW = 3600.0

TimelineSink = Callable[[Sequence[TimelineEvent]], None]
#: which cluster a snapshot shows: its context and what the server says it is
ClusterKey = tuple[str, ClusterId]


def _cluster(snapshot: ClusterSnapshot) -> ClusterKey:
    return snapshot.context, cluster_id(snapshot.server, snapshot.cluster_uid)


class TimelineHost(AppSurface, Protocol):
    """What of the app the timeline uses: its settings and clock (screens and workers are
    the App surface's)."""

    settings: Settings
    clock: Callable[[], float]


class TimelineFlow:
    """Derive, keep and show the timeline; take a replay's instead when given one."""

    def __init__(self, host: TimelineHost) -> None:
        self.host = host
        #: what gputui saw change (the summary reads it too)
        self.timeline = Timeline()
        #: told each new batch of events (a recording: ``recording_watch``)
        self.sink: TimelineSink | None = None
        self._base: ClusterSnapshot | None = None
        self._given = False
        self._actions: set[str] = set()
        self._sink_failed = False
        self._drawn: tuple[object, int] | None = None

    # ------------------------------------------------------------------ deriving
    def snapshot(self, snapshot: ClusterSnapshot) -> None:
        """A snapshot was applied: what changed since the last full one goes in."""
        if self._given or snapshot.loading:
            return
        base = self._base
        self._base = snapshot
        at = snapshot.generated_at or self.host.clock()
        if base is None or _cluster(base) != _cluster(snapshot):
            self.timeline.clear(since=at)  # a new cluster: its first snapshot is the baseline
            self._actions = set()
            self._read_actions(_cluster(snapshot), with_running=True)
            self._shown()
            return
        self._add(derive_events(base, snapshot, at))

    def given(self, events: Sequence[TimelineEvent], since: float | None = None) -> None:
        """Show exactly ``events`` (a replay up to its cursor) and derive nothing more."""
        self._given = True
        self.timeline.replace(events, since if since is not None else
                              (min((e.at for e in events), default=None)))
        self._shown()

    def _add(self, events: Sequence[TimelineEvent]) -> None:
        if not events:
            return
        self.timeline.extend(events)
        self._shown()
        sink = self.sink
        if sink is None or self._sink_failed:
            return
        try:
            sink(events)
        except Exception as error:  # noqa: BLE001 - a failing recorder must not stop the view
            self._sink_failed = True
            self.host.notify(f"The timeline is no longer recorded: {error}", severity="error",
                             timeout=12)

    # ------------------------------------------------------------------ showing
    def show_on(self, screen: Screen[Any]) -> None:
        """Hand the timeline to ``screen`` when it shows one."""
        if isinstance(screen, TimelineView):
            shown = (screen, self.timeline.version)
            if shown == self._drawn:
                return  # nothing new since this screen was given it (each snapshot asks)
            self._drawn = shown
            screen.show_timeline(self.timeline.query(), self.timeline.start,
                                 self.timeline.dropped, self.host.clock())

    def _shown(self) -> None:
        if self.host.screen_stack:
            self.show_on(self.host.screen)

    # ------------------------------------------------------------------ actions
    def operation_changed(self, operation_id: str, ended: bool) -> None:
        """An operation ended: its audit lines (with who) go in once."""
        if (ended and operation_id not in self._actions and not self._given
                and self._base is not None):
            self._read_actions(_cluster(self._base), with_running=False)

    def _read_actions(self, cluster: ClusterKey, with_running: bool) -> None:
        """Read the audit log's end in a thread; the actions come back on the UI thread."""
        wall = time.time()
        shift = self.host.clock() - wall
        path = self.host.settings.audit_log

        def read() -> None:
            entries = read_audit(path).entries
            operations = [op for op in pair_operations(entries, since=wall - ACTIONS_WINDOW)
                          if with_running or op.result is not None]
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.host.call_from_thread(self._actions_read, cluster, operations, shift)

        self.host.run_worker(read, thread=True, group="timeline-audit", exit_on_error=False)

    def _actions_read(self, cluster: ClusterKey, operations: Sequence[AuditedOperation],
                      shift: float) -> None:
        base = self._base
        if self._given or base is None or _cluster(base) != cluster:
            return  # a switch or a replay came first
        new: list[TimelineEvent] = []
        for audit_id, events in action_events(operations, cluster[1], shift, base.nodes):
            if audit_id not in self._actions:
                self._actions.add(audit_id)
                new += events
        self._add(new)
