"""``PodLogFlow``: the app's pod log view, opened on request and read off the UI thread.

Mixed into the app (like :class:`~gputui.ui.action_flow.ActionFlow`): a pane asks with
:class:`~gputui.ui.contracts.PodLogRequested`, the log and events are read in a thread
worker from the source, and the result reaches the log screen as a message.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import App
from textual.screen import Screen

from gputui.session import Session
from gputui.ui.contracts import PodLog, PodLogLoaded, PodLogRequested
from gputui.ui.screens.pod_log import PodLogScreen


class PodLogFlow(App[int]):
    """Open a pod container's log and events; reload on request."""

    session: Session

    def open_pod_log(self, namespace: str, pod: str, container: str | None = None) -> None:
        """Show a pod container's log and events (read in a thread worker)."""
        screen: Screen[Any] = self.screen
        if not isinstance(screen, PodLogScreen):
            screen = PodLogScreen(namespace, pod, container)
            self.push_screen(screen)
        self._read_pod_log(screen, namespace, pod, container)

    def on_pod_log_requested(self, message: PodLogRequested) -> None:
        self.open_pod_log(message.pod_namespace, message.pod, message.container)

    @work(thread=True, exclusive=True, group="pod-log", exit_on_error=False)
    def _read_pod_log(self, screen: Screen[Any], namespace: str, pod: str,
                      container: str | None) -> None:
        """Blocking reads off the UI thread; the result goes to ``screen`` as a message (a
        failure takes the app's one worker-failure path, then :meth:`pod_log_failed`)."""
        source = self.session.source
        lines = source.pod_log(namespace, pod, container)
        events = source.pod_events(namespace, pod)
        screen.post_message(PodLogLoaded(PodLog(namespace, pod, container, tuple(lines),
                                                tuple(events))))

    def pod_log_failed(self, line: str) -> None:
        """The pod-log worker's recovery: the open log screen shows the (scrubbed) line."""
        screen = self.screen
        if isinstance(screen, PodLogScreen):
            screen.post_message(PodLogLoaded(PodLog(screen.namespace, screen.pod,
                                                    screen.container, error=line)))
