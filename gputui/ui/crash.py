"""The crash report the TUI prints on its way out: no local variables, no credentials.

Textual prints an unhandled exception as a Rich traceback *with every frame's locals*
(``App._fatal_error`` passes ``show_locals=True``): a crash in a worker that held a
kubeconfig printed the bearer token nineteen times. gputui's report keeps the frames (the
file and line a bug report needs) and drops the locals, and the rendered text is scrubbed
of every credential gputui loaded and every pattern the debug log scrubs, before it is
shown.
"""

from __future__ import annotations

import io
import logging

import rich
from rich.console import Console
from rich.text import Text
from rich.traceback import Traceback
from textual.app import App

from gputui.logsetup import redact
from gputui.ui import textual_private as private

log = logging.getLogger("gputui.ui")


def worker_failure(what: str, error: BaseException) -> str:
    """One sentence for a worker that failed (a notification); the traceback goes to the
    debug log, whose formatter scrubs it."""
    log.error("%s failed", what, exc_info=error)
    first = (redact(str(error)).splitlines() or [""])[0][:160]
    return f"{what} failed: {type(error).__name__}" + (f": {first}" if first else "")


def crash_report(width: int) -> Text:
    """The exception being handled, as traceback text without locals, scrubbed."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=max(60, width), color_system=None,
                      highlight=False, soft_wrap=False)
    console.print(Traceback(show_locals=False, width=None, suppress=[rich]))
    return Text(redact(buffer.getvalue()))


class QuietCrash(App[int]):
    """Mixed into the app: Textual's fatal-error report, minus locals and secrets (through
    the checked private parts of :mod:`gputui.ui.textual_private`; when those changed,
    Textual's own report is left in place)."""

    if private.CRASH_HOOK:
        def _fatal_error(self) -> None:
            self.bell()
            private.exit_renderables(self).append(crash_report(self.console.width))
            private.close_messages_no_wait(self)
