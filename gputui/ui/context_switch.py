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
   The new context comes as a whole session (:func:`gputui.session.kube_opener`: source,
   metrics feed, runner), opened the way ``gputui --context`` opens one.
3. The old session's source and metrics feed stop (still in the thread: their threads are
   joined).
4. On the UI thread: the app swaps the session in one place
   (:meth:`~gputui.ui.app.GpuTuiApp.swap_session`): it forgets the old cluster (snapshot,
   status, metrics; queued snapshots of the old context are dropped by
   :meth:`ContextSwitch.accepts`), starts the new session, and checks permissions again;
   the screens show "◌ loading…" until every list is read, as at start.

Actions already applying keep their own runner (the flow took it when it started), so
their writes still go to, and their audit lines still name, the context they were planned
in; the old session's writers are closed only once no action is running
(:meth:`ContextSwitch.tidy`).

A context matching ``read_only_contexts`` (or any context under ``--read-only``) gets the
same writer ``--read-only`` gets: one that refuses every write before a request is built,
not even a SelfSubjectAccessReview, so the cluster sees GETs only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from gputui.domain.sanitize import clean_line
from gputui.session import Session
from gputui.settings import Settings
from gputui.sources.contexts import (
    ContextEntry,
    is_read_only,
    list_contexts,
)
from gputui.sources.errors import SourceError
from gputui.ui.app_host import AppSurface
from gputui.ui.screens.contexts import ContextsScreen

if TYPE_CHECKING:
    from gputui.ui.action_flow import ActionFlow
    from gputui.ui.exit_signals import ExitGuard

#: why a switch waits (see step 1 above)
ACTION_OPEN = "finish or close the open action first (its plan is for this cluster)"


class SessionHost(AppSurface, Protocol):
    """What of the app holds the session: the shown one and the swap (the app itself; a
    protocol, not an import of the app, which imports this module), and its exit guard (no
    session is installed while the app leaves)."""

    session: Session
    exit_guard: ExitGuard
    #: whether an action is open or applying (the one answer; ``action_flow``)
    actions: ActionFlow

    def swap_session(self, session: Session) -> None: ...


class ContextSwitch:
    """The app's current context and the switch to another (one per app)."""

    def __init__(self, host: SessionHost, settings: Settings) -> None:
        self.host = host
        self.settings = settings
        self.switching = ""
        #: sessions left while their actions ran: their writers are closed once none runs
        self.retired: list[Session] = []

    @property
    def current(self) -> str:
        """The context shown now (exactly as the kubeconfig spells it); "" without one."""
        return self.host.session.context

    @property
    def opener(self) -> object:
        """The shown session's opener; None: this session cannot switch."""
        return self.host.session.opener

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
            self.host.notify(f":ctx: {self.host.session.why_no_switch}", severity="warning")
            return
        try:
            entries = self.entries()
        except SourceError as error:
            self.host.notify(f":ctx: {error}", severity="error")
            return
        self.host.push_screen(ContextsScreen(entries))

    def switch(self, name: str) -> None:
        """Show context ``name``'s cluster (``enter`` in ``:ctx``, or ``:ctx NAME``)."""
        if self.opener is None:  # as ``:ctx`` alone: this session has nothing to switch to
            self.open_view()
            return
        why = self._refused(name)
        if why:
            self.host.notify(f"Cannot switch to {clean_line(name)}: {why}", severity="warning")
            return
        self.switching = name
        self.host.notify(f"Switching to {clean_line(name)}…", timeout=3)
        # anything else it raises takes the app's one worker-failure path, then
        # :meth:`open_failed`
        self.host.run_worker(lambda: self._open(name), thread=True, group="context-switch",
                            exit_on_error=False)

    def _refused(self, name: str) -> str | None:
        if self.switching:
            return f"still switching to {clean_line(self.switching)}"
        if name == self.current:
            return "it is the context shown"
        if self.host.actions.open:
            return ACTION_OPEN
        return None

    def _open(self, name: str) -> None:
        """Thread: open the new context's session; only then stop the old one's feeds."""
        opener = self.host.session.opener
        assert opener is not None
        try:
            opened = opener(name)
        except SourceError as error:  # expected: an unknown context, broken credentials
            self.host.call_from_thread(self._failed, f"{clean_line(name)}: {error}")
            return
        if self.host.exit_guard.exiting:  # leaving: the new context is never shown, and
            opened.close_writers()  # call_from_thread could wait on a stopped loop
            return
        self.host.session.stop()
        self.host.call_from_thread(self._install, opened)

    def open_failed(self, line: str) -> str:
        """The context-switch worker's recovery: the operator stays where they were."""
        name, self.switching = self.switching, ""
        return f"Cannot switch to {clean_line(name)}: {line}"

    def _failed(self, line: str) -> None:
        self.switching = ""
        self.host.notify(f"Cannot switch to {line}", severity="error", timeout=15)

    def _install(self, opened: Session) -> None:
        """UI thread: the new session replaces the old (:meth:`GpuTuiApp.swap_session`)."""
        host = self.host
        # an action opened while the new context loaded planned for the old one: closed,
        # nothing was applied
        if host.actions.close_open():
            host.notify("The open action was closed: it was planned for "
                        f"{clean_line(self.current)}", severity="warning")
        self.retired.append(self.host.session)
        self.switching = ""
        self.host.swap_session(opened)
        self.tidy()

    def tidy(self) -> None:
        """Close the writers of contexts left behind once no action runs (an action still
        applying writes through its own runner; the app calls this every second)."""
        if not self.retired or self.host.actions.busy:
            return
        retired, self.retired = self.retired, []
        for session in retired:
            session.close_writers()

    def close(self) -> None:
        """The app is leaving: every writer of every session it showed is closed."""
        retired, self.retired = [*self.retired, self.host.session], []
        for session in retired:
            session.close_writers()

