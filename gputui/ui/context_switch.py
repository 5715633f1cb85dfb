"""``:ctx``: show another kubeconfig context's cluster in place, without a restart.

Order of a switch, and why:

1. Refused while an action's prompts or dialog are open: that flow plans from
   ``app.snapshot``, and a plan made from the next cluster's snapshot but sent through this
   cluster's writer would act on the wrong machines.
2. The new context is loaded in a thread (kubeconfig, exec credential plugin without a
   prompt: the TUI holds the terminal). If that fails (unknown context, broken credentials)
   the operator gets one line and stays where they were: nothing was stopped yet. A server
   that does not answer is not a failure here: its header says "disconnected, retrying" and
   ``:ctx`` goes back.
3. The old source and metrics feed stop (still in the thread: their threads are joined).
4. On the UI thread: the app forgets the old cluster (snapshot, status, metrics; queued
   snapshots of the old context are dropped by :meth:`ContextSwitch.accepts`), takes the new
   source, feed and runner, starts them, and checks permissions again; the screens show
   "◌ loading…" until every list is read, as at start.

Actions already applying keep their own runner (the flow took it when it started), so
their writes still go to, and their audit lines still name, the context they were planned
in; the old writer is closed only once no action is running (:meth:`ContextSwitch.tidy`).

A context matching ``read_only_contexts`` (or any context under ``--read-only``) gets the
same writer ``--read-only`` gets: one that refuses every write before a request is built,
not even a SelfSubjectAccessReview, so the cluster sees GETs only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from textual.worker import WorkerState

from gputui.actions.audit import AuditLog
from gputui.actions.base import ClusterWriter
from gputui.actions.runner import Runner
from gputui.domain.sanitize import clean_line
from gputui.settings import Settings
from gputui.sources.base import ClusterSource, Connection, SourceStatus
from gputui.sources.contexts import (
    ContextEntry,
    close_writer,
    is_read_only,
    list_contexts,
    open_context,
    read_only_reason,
    source_context,
)
from gputui.sources.errors import SourceError
from gputui.ui.action_flow import ActionFlow
from gputui.ui.crash import worker_failure
from gputui.ui.screens.contexts import ContextsScreen

if TYPE_CHECKING:  # the UI loads no HTTP client at import (tests/ui/test_layering.py)
    from gputui.sources.metrics import MetricsFeed
    from gputui.sources.writer import KubeWriter

#: why ``:ctx`` does nothing in a session without a kubeconfig (demo, replay)
NO_KUBECONFIG = "this session has no kubeconfig contexts to switch between"
#: why a switch waits (see step 1 above)
ACTION_OPEN = "finish or close the open action first (its plan is for this cluster)"
#: the app's worker groups of an action being prompted, planned or dry-run (action_flow.py)
FLOWS = ("action-flow", "dry-run")
#: ... and of one applying: a retired writer is closed only when none of these runs
WRITING = (*FLOWS, "apply")


@dataclass(frozen=True)
class Opened:
    """What a context opens: its live source, its writer (None: no actions) and feed."""

    context: str
    source: ClusterSource
    writer: KubeWriter | None
    metrics: MetricsFeed | None
    read_only_reason: str | None = None
    #: the API server, for the header until the new source reports
    server: str = ""


ContextOpener = Callable[[str], Opened]


def kube_opener(settings: Settings) -> ContextOpener:
    """Open a context of ``settings``' kubeconfig the way ``gputui --context`` does."""

    def open_one(name: str) -> Opened:
        from gputui.sources.connect import open_metrics
        from gputui.sources.writer import writer_for_source

        source = open_context(settings, name)
        context = source.target.context
        writer = writer_for_source(source, read_only=is_read_only(settings, context))
        metrics = open_metrics(replace(settings, context=context), source)
        return Opened(context, source, writer, metrics, read_only_reason(settings, context),
                      source.target.server)

    return open_one


class ClusterFeeds(Protocol):
    """What of the app holds one cluster: its feeds and how to start and forget them (the
    app itself; a protocol, not an import of the app, which imports this module)."""

    source: ClusterSource
    metrics_feed: MetricsFeed | None

    def start_feeds(self) -> None: ...

    def forget_cluster(self, status: SourceStatus) -> None: ...

    async def action_switch_view(self, view: str) -> None: ...


class ContextSwitch:
    """The app's current context and the switch to another (one per app)."""

    def __init__(self, app: ActionFlow, feeds: ClusterFeeds, settings: Settings,
                 source: ClusterSource, opener: ContextOpener | None = None) -> None:
        self.app = app
        self.feeds = feeds
        self.settings = settings
        context = source_context(source)
        live = context is not None and not settings.demo
        #: the context shown now (exactly as the kubeconfig spells it); "" without one
        self.current = context or ""
        #: None: this session cannot switch (demo, replay, no kubeconfig)
        self.opener = opener or (kube_opener(settings) if live else None)
        self.source = source
        self.switching = ""
        #: writers of contexts left while their actions ran: closed once none runs
        self.retired: list[ClusterWriter] = []
        #: writers this switch built in place of one it was given (closed on the way out)
        self.made: list[ClusterWriter] = []

    def first_runner(self, writer: ClusterWriter | None) -> Runner | None:
        """The runner for the context shown at start; a context matching
        ``read_only_contexts`` gets a read-only writer whatever it was given (fail closed:
        ``--context prod-1`` is as read-only as a switch to it)."""
        if writer is None:
            return None
        if self.read_only and not writer.read_only:
            from gputui.sources.writer import writer_for_source

            made = writer_for_source(self.source, read_only=True)
            if made is None:
                return None
            self.made.append(made)
            writer = made
        return Runner(writer, AuditLog(self.settings.audit_log),
                      read_only_reason=read_only_reason(self.settings, self.current))

    @property
    def read_only(self) -> bool:
        """The header's ``read-only``: the flag, or the current context matches a glob."""
        return is_read_only(self.settings, self.current) if self.current \
            else self.settings.read_only

    def accepts(self, context: str) -> bool:
        """A snapshot or status of ``context`` belongs on screen (not the old cluster's).

        Snapshots and statuses carry the context as a display name (cleaned: a zero-width
        space or a bidi override pasted into a kubeconfig is shown escaped); the switch keeps
        the raw name the kubeconfig holds, so both are compared as displayed.
        """
        return not context or not self.current or clean_line(context) == clean_line(self.current)

    def entries(self) -> tuple[ContextEntry, ...]:
        """The kubeconfig's contexts, the one shown marked (raises SourceError)."""
        return list_contexts(self.settings, showing=self.current or None)

    def names(self) -> tuple[str, ...]:
        """Context names for ``:ctx NAME`` completion; none when they cannot be read."""
        if self.opener is None:
            return ()
        try:
            # a name that needs cleaning is not typed into the prompt (pick it in the list)
            return tuple(entry.key for entry in self.entries() if entry.key == entry.name)
        except SourceError:
            return ()

    def open_view(self) -> None:
        """``:ctx``: the list, or one line saying why there is none."""
        if self.opener is None:
            self.app.notify(f":ctx: {NO_KUBECONFIG}", severity="warning")
            return
        try:
            entries = self.entries()
        except SourceError as error:
            self.app.notify(f":ctx: {error}", severity="error")
            return
        self.app.push_screen(ContextsScreen(entries))

    def switch(self, name: str) -> None:
        """Show context ``name``'s cluster (``enter`` in ``:ctx``, or ``:ctx NAME``)."""
        why = self._refused(name)
        if why:
            self.app.notify(f"Cannot switch to {clean_line(name)}: {why}", severity="warning")
            return
        self.switching = name
        self.app.notify(f"Switching to {clean_line(name)}…", timeout=3)
        self.app.run_worker(lambda: self._open(name), thread=True, group="context-switch",
                            exit_on_error=False)

    def _refused(self, name: str) -> str | None:
        if self.opener is None:
            return NO_KUBECONFIG
        if self.switching:
            return f"still switching to {clean_line(self.switching)}"
        if name == self.current:
            return "it is the context shown"
        if self._running(FLOWS):
            return ACTION_OPEN
        return None

    def _running(self, groups: tuple[str, ...]) -> bool:
        return any(w.group in groups and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.app.workers)

    def _open(self, name: str) -> None:
        """Thread: open the new context; only then stop the old one's feeds."""
        assert self.opener is not None
        try:
            opened = self.opener(name)
        except SourceError as error:
            self.app.call_from_thread(self._failed, f"{clean_line(name)}: {error}")
            return
        except Exception as error:  # noqa: BLE001 - a worker's failure is said, not fatal
            self.app.call_from_thread(self._failed, worker_failure(
                f"opening context {clean_line(name)}", error))
            return
        if self.app.exit_guard.exiting:  # leaving: the new context is never shown, and
            close_writer(opened.writer)  # call_from_thread could wait on a stopped loop
            return
        old_source, old_metrics = self.feeds.source, self.feeds.metrics_feed
        old_source.stop()
        if old_metrics is not None:
            old_metrics.stop()
        self.app.call_from_thread(self._install, opened)

    def _failed(self, line: str) -> None:
        self.switching = ""
        self.app.notify(f"Cannot switch to {line}", severity="error", timeout=15)

    def _install(self, opened: Opened) -> None:
        """UI thread: the new cluster replaces the old everywhere the app keeps it."""
        app = self.app
        if self._running(FLOWS):  # opened while the new context loaded: it planned for the
            app.workers.cancel_group(app, "action-flow")  # old one; nothing was applied
            app.notify("The open action was closed: it was planned for "
                       f"{clean_line(self.current)}", severity="warning")
        old_runner = app.runner
        if old_runner is not None:
            self.retired.append(old_runner.writer)
        self.current, self.switching = opened.context, ""
        feeds = self.feeds
        feeds.forget_cluster(SourceStatus(Connection.CONNECTING, context=opened.context,
                                        server=opened.server))
        feeds.source, feeds.metrics_feed = opened.source, opened.metrics
        app.runner = Runner(opened.writer, AuditLog(self.settings.audit_log),
                            read_only_reason=opened.read_only_reason) \
            if opened.writer is not None else None
        app.hand_down_blocks(app.screen_stack)
        app.refresh_bindings()
        feeds.start_feeds()
        app.check_permissions()
        app.call_later(feeds.action_switch_view, "nodes")
        self.tidy()

    def tidy(self) -> None:
        """Close the writers of contexts left behind once no action runs (an action still
        applying writes through its own; the app calls this every second)."""
        if not self.retired or self.app.exit_guard.busy or self._running(WRITING):
            return
        retired, self.retired = self.retired, []
        for writer in retired:
            close_writer(writer)

    def close(self) -> None:
        """The app is leaving: every writer this switch used is closed (closing twice is
        harmless: ``run_tui`` closes the first one too)."""
        retired, self.retired = [*self.retired, *self.made], []
        self.made = []
        if self.app.runner is not None:
            retired.append(self.app.runner.writer)
        for writer in retired:
            close_writer(writer)
