"""The one path a background worker's failure takes: one scrubbed, logged sentence.

Why one path: each worker caught its own exceptions, six ways. The pod log showed an
exception's raw text (a URL with a password in it, unlogged), the timeline's read of the
audit log failed in silence, and a worker that caught nothing ended the session (Textual's
default). Now every worker runs with ``exit_on_error=False`` and its failure reaches the
app's one ``Worker.StateChanged`` handler, which calls :meth:`WorkerFailures.failed`: the
error is logged with its traceback and redacted (:func:`gputui.ui.crash.worker_failure`),
the worker's own recovery (keyed by its group) puts its view back in order and may word the
sentence, and the operator reads one line. Expected outcomes (a refused dry run, a context
that does not exist) are not failures: the flows show those where they happen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from textual.worker import Worker

from gputui.ui.crash import worker_failure

#: worker group -> what it was doing (the subject of the sentence the operator reads)
TASKS: Final = {
    "permissions": "checking permissions",
    "pod-log": "reading the pod log",
    "timeline-audit": "reading the audit log for the timeline",
    "context-switch": "opening the context",
    "action-flow": "planning",
    "dry-run": "the dry run",
    "apply": "applying the action",
}

#: a worker group's recovery: given the sentence, it restores its view and returns the
#: sentence to show (None: show the sentence as it is)
Recovery = Callable[[str], str | None]


class WorkerFailures:
    """Says every failed worker once, after its group's recovery ran."""

    def __init__(self, notify: Callable[..., Any]) -> None:
        self._notify = notify
        self._recoveries: dict[str, Recovery] = {}
        #: the sentences said (tests, and the debug log has the tracebacks)
        self.said: list[str] = []

    def recover(self, group: str, recovery: Recovery) -> None:
        """Run ``recovery`` when a worker of ``group`` fails."""
        self._recoveries[group] = recovery

    def failed(self, worker: Worker[Any]) -> None:
        """``worker`` ended with an exception: log it, let its group recover, say it."""
        error = worker.error
        if error is None:
            return
        what = TASKS.get(worker.group, f"the background task {worker.name}")
        line = worker_failure(what, error)
        recovery = self._recoveries.get(worker.group)
        if recovery is not None:
            line = recovery(line) or line
        self.said.append(line)
        self._notify(line, title="Failed", severity="error", timeout=15)
