"""``SummaryFlow``: the app opens the handoff summary and hands it over.

A plain object the app holds (like :class:`~gputui.ui.pod_logs.PodLogs`). ``:summary``
builds the summary from the app's latest snapshot and the audit log's lines since the session started
(:func:`gputui.handoff.session_summary`) and pushes :class:`SummaryScreen`; its ``y`` comes
back to the app as ``SummaryCopyRequested``, which hands the text to :meth:`SummaryFlow.copy`.

How it is handed over: OSC 52 (``ESC ] 52 ; c ; <base64> BEL``, Textual's
``App.copy_to_clipboard``) puts text on the clipboard of the terminal the operator sits at,
over SSH too; tmux takes it into a paste buffer (and passes it on) when its option
``set-clipboard`` is ``on``. A terminal gives no answer, so gputui cannot know that it
worked; it can know when it would not: hterm (ChromeOS) and others drop a sequence over
about 100,000 bytes (the limit vim-oscyank and hterm document), so a longer summary, or
the setting ``clipboard: file``, writes a private file (0600, next to the audit log)
instead. The operator is told in one line which happened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from gputui.domain.model import ClusterSnapshot
from gputui.domain.timeline_event import Timeline
from gputui.handoff import session_summary
from gputui.privatefile import PrivateFileError, open_private, write_all
from gputui.settings import Settings
from gputui.ui.app_host import AppSurface
from gputui.ui.commands import command, effective_keys
from gputui.ui.screens.summary import SummaryScreen

#: the longest OSC 52 sequence sent (bytes of base64); longer goes to a file
OSC52_LIMIT = 100_000
#: ``clipboard`` setting values
CLIPBOARD_OSC52 = "osc52"
CLIPBOARD_FILE = "file"


def osc52_length(text: str) -> int:
    """Bytes of base64 that ``text`` takes in an OSC 52 sequence."""
    return 4 * ((len(text.encode()) + 2) // 3)


def file_reason(setting: str, text: str) -> str | None:
    """Why the summary goes to a file rather than OSC 52, or None to use OSC 52."""
    if setting == CLIPBOARD_FILE:
        return "clipboard: file is set"
    if setting != CLIPBOARD_OSC52:  # fail closed: an unknown setting sends nothing out
        return f"unknown clipboard setting {setting!r}"
    if osc52_length(text) > OSC52_LIMIT:
        return f"too large for OSC 52 ({osc52_length(text)} > {OSC52_LIMIT} bytes)"
    return None


def write_summary_file(directory: Path, text: str, wall: float) -> Path:
    """``summary-<UTC time>.md`` in ``directory``, 0600, never overwriting one.

    Raises:
        PrivateFileError: the directory or the file cannot be used safely (one sentence).
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(wall))
    for attempt in range(100):
        path = directory / f"summary-{stamp}{f'-{attempt}' if attempt else ''}.md"
        if path.exists() or path.is_symlink():
            continue
        fd = open_private(path, "the summary file", private_dir=True)
        try:
            write_all(fd, text.encode())
        except OSError as error:
            raise PrivateFileError(f"cannot write the summary file {path}: "
                                   f"{error.strerror or error}") from None
        finally:
            os.close(fd)
        return path
    raise PrivateFileError(f"cannot write the summary file: 100 files named summary-{stamp}"
                           f" already in {directory}")


class SummaryHost(AppSurface, Protocol):
    """What of the app the handoff summary uses (besides the App surface)."""

    settings: Settings
    snapshot: ClusterSnapshot
    clock: Callable[[], float]
    keymap: dict[str, str]
    #: wall-clock time the session began: the audit lines from then on are "this session"
    session_started: float

    def copy_to_clipboard(self, text: str) -> None: ...


class SummaryFlow:
    """Opens the handoff summary; copies it or writes it to a file on confirm."""

    def __init__(self, host: SummaryHost, timeline: Timeline) -> None:
        self.host = host
        #: what the app saw change (:class:`~gputui.ui.timeline_flow.TimelineFlow`'s)
        self.timeline = timeline

    def open(self) -> None:
        """``:summary``: build the summary now and show it for review."""
        host = self.host
        text = session_summary(host.snapshot, host.settings.audit_log, host.session_started,
                               host.clock(), self.timeline)
        keys = effective_keys(command("summary.copy"), host.keymap)
        host.push_screen(SummaryScreen(text, keys))

    def copy(self, text: str, wall: float | None = None) -> None:
        """Copy through OSC 52, or write the file (``wall``: its time); one line says which."""
        host = self.host
        reason = file_reason(host.settings.clipboard, text)
        if reason is None:
            host.copy_to_clipboard(text)
            host.notify(f"Summary sent to the clipboard with OSC 52 ({len(text.encode())} "
                        "bytes); in tmux this needs set-clipboard on.", timeout=8)
            return
        directory = Path(host.settings.audit_log).expanduser().parent
        try:
            path = write_summary_file(directory, text, time.time() if wall is None else wall)
        except PrivateFileError as error:
            host.notify(f"Summary not copied ({reason}) and not written: {error}",
                        severity="error", timeout=12)
            return
        host.notify(f"Summary written to {path} ({reason}).", timeout=12)
