"""What ``--record`` records, and whether it still does: the header's ``● rec`` must never
outlive the file.

The recorder is tapped into the first session's source and feed, so it records while that
session is the one shown: after ``:ctx`` (even back to the same context, which opens a new
session) no objects are recorded, and no timeline events either (README, Recording and
replay). A recording stops when a write fails (a full disk); the writer keeps why
(:attr:`gputui.sources.tape.writer.TapeWriter.error`). The app asks here every second, so the
header turns to ``✖ rec stopped`` at once and the operator is told once, as an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gputui.domain.sanitize import clean_line
from gputui.domain.timeline_event import TimelineEvent
from gputui.session import Session


class RecordingWatch:
    """The recorded session (None: nothing records), its timeline, and why it stopped."""

    def __init__(self, recorded: Session | None = None) -> None:
        #: the session ``--record`` writes; None when not recording
        self.recorded = recorded if recorded is not None and recorded.can_record else None
        self._told = False

    def records(self, shown: Session) -> bool:
        """Whether what is shown is being recorded (the recorded session is shown)."""
        return self.recorded is not None and self.recorded is shown

    def timeline(self, shown: Session, events: Sequence[TimelineEvent]) -> None:
        """Write ``events`` to the recording while the recorded session is shown."""
        recorder = self.recorded.recorder if self.recorded is not None else None
        if recorder is not None and self.records(shown):
            recorder.timeline([event.to_json() for event in events])

    def stopped(self, tell: Callable[[str], None]) -> bool:
        """Whether the recording stopped; the first time, ``tell`` hears why."""
        recorder = self.recorded.recorder if self.recorded is not None else None
        problem = recorder.error if recorder is not None else None
        if problem and not self._told:
            self._told = True
            tell(f"{clean_line(problem)}: this session is no longer recorded")
        return bool(problem)
