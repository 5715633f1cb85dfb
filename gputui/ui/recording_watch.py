"""Whether ``--record`` still records: the header's ``● rec`` must never outlive the file.

A recording stops when a write fails (a full disk); the writer keeps why
(:attr:`gputui.sources.tape.writer.TapeWriter.error`). The app asks here every second, so the
header turns to ``✖ rec stopped`` at once and the operator is told once, as an error.
"""

from __future__ import annotations

from collections.abc import Callable

from gputui.domain.sanitize import clean_line


class RecordingWatch:
    """Asks the recorder why it stopped (``problem``; None: nothing records) and says it once."""

    def __init__(self) -> None:
        #: why the recording stopped, or None while it works; set by whoever opened it
        self.problem: Callable[[], str | None] | None = None
        self._told = False

    def stopped(self, tell: Callable[[str], None]) -> bool:
        """Whether the recording stopped; the first time, ``tell`` hears why."""
        problem = self.problem() if self.problem is not None else None
        if problem and not self._told:
            self._told = True
            tell(f"{clean_line(problem)}: this session is no longer recorded")
        return bool(problem)
