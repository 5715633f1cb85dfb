"""``GpuTuiApp`` and :func:`make_app`, the one factory the CLI, the tests and the screenshots share.

The app owns the single refresh path (see :mod:`gputui.ui.contracts`, imported as ``msg``):
source callbacks arrive on foreign threads and become messages (``SnapshotUpdated``
coalesces, so a slow terminal shows the newest cluster, not a backlog); the handler stores
``self.snapshot`` and :class:`~gputui.ui.screen_feed.ScreenFeed` hands it to the active
screen only. Views are Textual *modes* (:mod:`gputui.ui.screens.views`); when a screen
becomes active again it is given the latest snapshot.

Everything else is done by plain objects the app holds and hands itself to as their host:
``commands`` (views, jumps, the ``:`` line), ``actions`` (prompt, plan, confirm, dry run,
apply), ``operation_flow`` (who shows running operations), ``timelines``, ``summaries``,
``pod_logs``, ``contexts`` (``:ctx``), ``replay``. The app's key actions and message
handlers hand them their work in one line each; no flow is a base class of the app.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from textual import events
from textual.actions import ActionParseResult
from textual.dom import DOMNode
from textual.driver import Driver
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from gputui import gctuning
from gputui.domain.metrics import EMPTY_METRICS, MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.session import Session
from gputui.settings import Settings
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.action_flow import ActionFlow
from gputui.ui.command_flow import CommandFlow
from gputui.ui.commands import bindings_for, command_for_action
from gputui.ui.context_switch import ContextSwitch
from gputui.ui import contracts as msg
from gputui.ui.crash import QuietCrash
from gputui.ui.exit_signals import AppExit
from gputui.ui.operations_flow import OperationsFlow
from gputui.ui.palette import GpuCommands
from gputui.ui.recording_watch import RecordingWatch
from gputui.ui.replay_controls import ONLY_IN_REPLAY, ReplayControls
from gputui.ui.pod_logs import PodLogs
from gputui.ui.render.style import PLAIN, Palette
from gputui.ui.screen_feed import ScreenFeed
from gputui.ui.screens.views import VIEWS
from gputui.ui.selection import Selection
from gputui.ui.snapshot_pace import SnapshotPace
from gputui.ui.stylesheets import stylesheet_paths
from gputui.ui.summary_flow import SummaryFlow
from gputui.ui.textual_private import DRIVER_FILE
from gputui.ui.theme import GPUTUI_THEME, gpu_variables, theme_palette
from gputui.ui.timeline_flow import TimelineFlow
from gputui.ui.typeahead import TypeAhead
from gputui.ui.widgets.status_header import INITIAL_STATUS
from gputui.ui.worker_errors import WorkerFailures

if TYPE_CHECKING:
    from gputui.actions.runner import Runner
    from gputui.sources.base import ClusterSource


class GpuTuiApp(QuietCrash):
    """The gputui terminal UI; build it with :func:`make_app`."""

    TITLE = "gputui"
    CSS_PATH = stylesheet_paths()
    COMMANDS = {GpuCommands}  # noqa: RUF012 - a Textual class attribute
    #: the replay's keys are bound always and shown only in a replay (``check_action``)
    BINDINGS = bindings_for("global") + bindings_for("replay")
    MODES = VIEWS
    DEFAULT_MODE = "nodes"
    #: role colours of the active theme, built once per theme change and handed down
    palette: Palette = PLAIN

    def __init__(self, settings: Settings, session: Session, *,
                 hard_exit: bool = False) -> None:
        super().__init__()
        self.settings = settings
        #: what is shown and what may be done with it; ``:ctx`` swaps it (:meth:`swap_session`)
        self.session = session
        #: what ``--record`` records (the header's ``● rec`` while its session is shown)
        #: and whether it still does (a full disk stops it), asked every second
        self.recording_watch = RecordingWatch(session)
        self.clock = session.clock
        #: the flows: plain objects given the app as their host (see the module docstring)
        self.operation_flow = OperationsFlow(self)
        self.operations = self.operation_flow.operations
        self.actions = ActionFlow(self, self.operation_flow)
        self.commands = CommandFlow(self)
        self.feed = ScreenFeed(self)
        #: ``:ctx``: which kubeconfig context is shown, and the switch to another
        self.contexts = ContextSwitch(self, settings)
        #: every worker's failure: logged, scrubbed, its view restored, said in one line
        self.worker_failures = WorkerFailures(lambda *said, **how: self.notify(*said, **how))
        self.worker_failures.recover("context-switch", self.contexts.open_failed)
        self.worker_failures.recover("action-flow", self.actions.planning_failed)
        #: the pod log view and the handoff summary (``pod_logs``, ``summary_flow``)
        self.pod_logs = PodLogs(self)
        #: what changed and when (``timeline_flow``; ``:timeline`` and the summary read it)
        self.timelines = TimelineFlow(self)
        self.summaries = SummaryFlow(self, self.timelines.timeline)
        self.worker_failures.recover("pod-log", self.pod_logs.failed)
        #: the replay's keys; None for a live cluster
        self.replay = (ReplayControls(self, session.replay, self.commands.typed)
                       if session.replay is not None else None)
        self.session_started = time.time()  # wall clock, as the audit log's lines
        self.metrics: MetricsReading = EMPTY_METRICS
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self.status: SourceStatus = INITIAL_STATUS
        self.keymap: dict[str, str] = dict(settings.keymap)
        #: the newest snapshot, applied a few times a second at most
        self.pace = SnapshotPace(self._show_snapshot, lambda wait, then: self.set_timer(
            wait, then, name="apply-snapshot"))
        #: freezes a big cluster's heap and spaces full collections (see gputui.gctuning)
        self._heap = gctuning.BigHeap()
        #: keys typed ahead wait for what the key before them started (see typeahead.py)
        self.typeahead = TypeAhead(self, super().on_event)
        #: SIGHUP, SIGTERM and quit: stop every running action, then leave within 5 s
        self.app_exit = AppExit(self, lambda: self.session.stop(), hard_exit)
        self.exit_guard = self.app_exit.guard
        self.register_theme(GPUTUI_THEME)
        self.theme = settings.theme if settings.theme in self.available_themes else "gputui"
        if session.can_record:
            self.timelines.sink = lambda events: self.recording_watch.timeline(
                self.session, events)
        if self.replay is not None:  # the timeline shows what was recorded, from the first
            self.timelines.given([], since=self.replay.cursor.start)  # cursor move on

    @property
    def source(self) -> ClusterSource:
        """The shown session's source."""
        return self.session.source

    @property
    def runner(self) -> Runner | None:
        """The shown session's runner; None: every action is greyed."""
        return self.session.runner

    def get_css_variables(self) -> dict[str, str]:
        """Textual's variables plus ``$gpu-*`` for themes that do not define them; Textual
        asks on every theme change, so the role palette is rebuilt here, once per change."""
        variables = super().get_css_variables()
        variables.update(gpu_variables(variables))
        self.theme_variables = variables
        self.palette = theme_palette(variables)
        return variables

    # ------------------------------------------------------------------ lifecycle
    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.set_interval(1.0, self.feed.refresh_header, name="header-age")
        self.app_exit.install()
        self.set_interval(1.0, self.contexts.tidy, name="context-writers")
        self.actions.check_permissions()
        self.start_feeds()

    @property
    def recording(self) -> bool:
        """Whether what is shown is being recorded (a ``:ctx`` switch ends it)."""
        return self.recording_watch.records(self.session)

    def on_resize(self, event: events.Resize) -> None:
        """Every terminal resize paints the whole screen again: Textual repaints only what
        its layout changed and skips a resize back to the size it had, but the terminal
        (tmux, an SSH window) cut the lines in between, and after 80x24 → 60x20 → 80x24 the
        cut lines stayed. Runs beside Textual's own handler (which debounces)."""
        del event  # the size is the screen's business; only the repaint is ours
        self.screen.refresh(repaint=True)
        self.call_after_refresh(self.screen.refresh, repaint=True)

    def start_feeds(self) -> None:
        """Start the session's source and metrics feed (at mount, and after ``:ctx``)."""
        self.session.start(self._posts(msg.SnapshotUpdated),
                           self._posts(msg.SourceStatusChanged), self._posts(msg.MetricsUpdated))

    def _posts(self, message: Callable[[Any], Message]) -> Callable[[Any], None]:
        """A callback for a source's or feed's thread: it posts a message, nothing else."""
        return lambda value: None if self.post_message(message(value)) else None

    def swap_session(self, session: Session) -> None:
        """``:ctx``: the one place another session replaces the shown one. Nothing of the
        old cluster is shown or applied after this (its feeds were stopped by the switch);
        the new context is named in the header until its source reports, the greyed keys
        and permissions are its own, and the node list is shown."""
        self.session = session
        self.pace.forget()
        self.snapshot, self.metrics = EMPTY_SNAPSHOT, EMPTY_METRICS
        self.status = SourceStatus(Connection.CONNECTING, context=session.context,
                                   server=session.server)
        self.refresh_header()
        self.actions.hand_down_blocks(self.screen_stack)
        self.refresh_bindings()
        self.start_feeds()
        self.actions.check_permissions()
        self.call_later(self.commands.switch_view, "nodes")

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver, made safe for a terminal that goes away (terminal.py)."""
        driver = super().get_driver_class()
        if driver.__name__ == "LinuxDriver" and DRIVER_FILE:
            from gputui.ui.terminal import GpuLinuxDriver

            return GpuLinuxDriver
        return driver

    async def action_quit(self) -> None:
        """``q``, ``ctrl+q``, ``:q``: with operations running ask first (stop them, or
        stay); then stop the running actions and leave."""
        if not self.operation_flow.ask_quit():
            self.exit_guard.begin("quit", 0)

    async def on_event(self, event: events.Event) -> None:
        """Terminal keys go through :class:`TypeAhead`, answered first (``Foreground``)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.session.foreground.claim()
            await self.typeahead.key(event)
            return
        await super().on_event(event)

    def on_unmount(self) -> None:
        self.exit_guard.release()
        self.typeahead.cancel()
        self.contexts.close()
        self.session.stop()
        self._heap.release()

    def on_metrics_updated(self, message: msg.MetricsUpdated) -> None:
        """Keep the newest reading; the active screen and the header show it."""
        self.feed.metrics(message.reading)

    def on_metrics_wanted(self, message: msg.MetricsWanted) -> None:
        """A screen says what is on screen: the feed reads that from its next refresh."""
        if self.session.metrics is not None:
            self.session.metrics.want(message.want)

    # ------------------------------------------------------------------ the refresh path
    def on_snapshot_updated(self, message: msg.SnapshotUpdated) -> None:
        """Keep the newest snapshot; the pace applies it (``snapshot_pace``)."""
        if self.contexts.accepts(message.snapshot.context):  # not one queued before :ctx
            self.pace.offer(message.snapshot)

    def _show_snapshot(self, snapshot: ClusterSnapshot) -> None:
        if not self.screen_stack:  # shutting down
            return
        self.snapshot = snapshot
        # a big cluster's first load is frozen before delivery (collections during the table
        # fill skip it) and once more after, for the rows the fill built (gputui.gctuning)
        big = self._heap.loaded(len(snapshot.nodes))
        self.timelines.snapshot(snapshot)
        self.feed.deliver(self.screen)  # painted, the source decodes what it held back:
        self.call_after_refresh(self.session.foreground.shown, snapshot.loading)
        if big:
            gctuning.freeze()

    @property
    def min_snapshot_interval(self) -> float:
        """Seconds between two applied snapshots (tests set 0 to apply each at once)."""
        return self.pace.interval

    @min_snapshot_interval.setter
    def min_snapshot_interval(self, seconds: float) -> None:
        self.pace.interval = seconds

    def on_source_status_changed(self, message: msg.SourceStatusChanged) -> None:
        """Connection state changed: the header says live / stale since / disconnected."""
        if not self.contexts.accepts(message.status.context):
            return  # queued by the context shown before a switch
        self.status = message.status
        self.refresh_header()

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A screen became active: give it the latest snapshot after it is composed."""
        self.call_after_refresh(self.feed.deliver, screen)

    def deliver(self, screen: Screen[Any]) -> None:
        """Hand ``screen`` everything it shows (``screen_feed``)."""
        self.feed.deliver(screen)

    def refresh_header(self) -> None:
        """Redraw the headers (``screen_feed``)."""
        self.feed.refresh_header()

    # ------------------------------------------------------------------ workers
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one path of every worker's failure (``worker_errors``)."""
        if event.state is WorkerState.ERROR:
            self.worker_failures.failed(event.worker)

    def on_pod_log_requested(self, message: msg.PodLogRequested) -> None:
        self.pod_logs.open(message.pod_namespace, message.pod, message.container)

    def action_summary(self) -> None:
        """``:summary``: the handoff summary, for review."""
        self.summaries.open()

    def on_summary_copy_requested(self, message: msg.SummaryCopyRequested) -> None:
        self.summaries.copy(message.markdown)

    def on_context_switch_requested(self, message: msg.ContextSwitchRequested) -> None:
        self.contexts.switch(message.context)

    def action_replay(self, what: str) -> None:
        """The replay keys (``replay_controls``); outside a replay (``:at``), one line."""
        if self.replay is None:
            self.notify(ONLY_IN_REPLAY, severity="warning")
            return
        self.replay.key(what)

    def on_timeline_recorded(self, message: msg.TimelineRecorded) -> None:
        """A replay: hand the recorded events up to the cursor to ``:timeline``."""
        if self.replay is not None:
            self.timelines.given(message.events, since=self.replay.cursor.start)

    def action_contexts(self) -> None:
        """``:ctx``: the kubeconfig's contexts."""
        self.contexts.open_view()

    # ------------------------------------------------------------------ commands and actions
    def on_command_requested(self, message: msg.CommandRequested) -> None:
        self.call_later(self.commands.run, message.command_id)

    async def action_switch_view(self, view: str) -> None:
        await self.commands.switch_view(view)

    async def action_back(self) -> None:
        await self.commands.back()

    def action_mark_elsewhere(self) -> None:
        self.commands.mark_elsewhere()

    def action_help(self) -> None:
        self.commands.help()

    def action_command_line(self) -> None:
        self.commands.command_line()

    def on_jump_requested(self, message: msg.JumpRequested) -> None:
        self.commands.jump_to(message.node, message.pane)

    def action_act(self, action_id: str) -> None:
        self.actions.act(action_id)

    def action_blocks(self) -> msg.ActionBlocks:
        """action id -> why it is greyed (the palette's :class:`CommandHost` reads it)."""
        return self.actions.blocks()

    async def run_action(self, action: str | ActionParseResult,
                         default_namespace: DOMNode | None = None,
                         namespaces: Mapping[str, DOMNode] | None = None) -> bool:
        """Every key binding and palette entry: a greyed action or a key its screen hides
        is answered with its reason (``ActionFlow.answered_at_once``), never dropped."""
        if self.actions.answered_at_once(action, default_namespace):
            return True
        return await super().run_action(action, default_namespace, namespaces)

    def on_action_requested(self, message: msg.ActionRequested) -> None:
        self.actions.start(message.action_id, Selection(message.targets))

    def on_apply_requested(self, message: msg.ApplyRequested) -> None:
        self.actions.apply_requested(message)

    def on_operation_changed(self, message: msg.OperationChanged) -> None:
        self.operation_flow.changed(message.operation)

    def on_operation_open_requested(self, message: msg.OperationOpenRequested) -> None:
        self.operation_flow.open(message.op_id)

    def on_operation_stop_requested(self, message: msg.OperationStopRequested) -> None:
        self.operation_flow.stop(message.op_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Registry answers: the current view's own key is shown greyed out."""
        if action == "replay":  # hidden outside a replay; typing and dialogs come first
            return self.replay is not None and self.replay.allows()
        cmd = command_for_action(action)
        if cmd is not None and action == "switch_view" and parameters:
            return None if parameters[0] == self.current_mode else True
        if action == "act" and parameters and str(parameters[0]) in self.actions.blocks():
            return None  # greyed: help and the palette say why
        return True


def make_app(settings: Settings, session: Session, *, hard_exit: bool = False) -> GpuTuiApp:
    """The app for ``settings`` showing ``session`` (:func:`gputui.session.open_session`;
    tests build one with :func:`gputui.session.session_of`): the only way an app is made,
    for a live cluster, the demo, a replay and the tests alike.

    What the session holds decides what the app offers: a runner (actions), a recorder
    (``● rec``), an opener (``:ctx``), a replay (the cursor keys, every action greyed).
    ``hard_exit``: the real program, which must be gone within 5 s of quit or a signal.
    """
    return GpuTuiApp(settings, session, hard_exit=hard_exit)
