"""``PodLogs``: the pod log view, opened on request and read off the UI thread.

A plain object the app holds (not mixed into it): a pane asks with
:class:`~gputui.ui.contracts.PodLogRequested`, the app hands the request here, the log and
events are read in a thread worker from the shown session's source, and the result reaches
the log screen as a message. A failed read takes the app's one worker-failure path
(``worker_errors``), whose recovery for this group is :meth:`PodLogs.failed`.
"""

from __future__ import annotations

from typing import Protocol

from gputui.session import Session
from gputui.ui.app_host import AppSurface
from gputui.ui.contracts import PodLog, PodLogLoaded
from gputui.ui.screens.pod_log import PodLogScreen

#: the worker group of the reads (``worker_errors.TASKS`` says what it was doing)
GROUP = "pod-log"


class PodLogHost(AppSurface, Protocol):
    """What of the app the pod log view uses: the shown session (its source reads logs)."""

    session: Session


class PodLogs:
    """Opens a pod container's log and events; reloads on request."""

    def __init__(self, host: PodLogHost) -> None:
        self.host = host

    def open(self, namespace: str, pod: str, container: str | None = None) -> None:
        """Show a pod container's log and events (read in a thread worker)."""
        screen = self.host.screen
        if not isinstance(screen, PodLogScreen):
            screen = PodLogScreen(namespace, pod, container)
            self.host.push_screen(screen)
        source = self.host.session.source  # the session shown when it was asked for

        def read() -> None:
            lines = source.pod_log(namespace, pod, container)
            events = source.pod_events(namespace, pod)
            screen.post_message(PodLogLoaded(PodLog(namespace, pod, container, tuple(lines),
                                                    tuple(events))))

        self.host.run_worker(read, thread=True, exclusive=True, group=GROUP,
                             exit_on_error=False)

    def failed(self, line: str) -> None:
        """The read failed: the open log screen shows the (scrubbed) line."""
        screen = self.host.screen
        if isinstance(screen, PodLogScreen):
            screen.post_message(PodLogLoaded(PodLog(screen.namespace, screen.pod,
                                                    screen.container, error=line)))
