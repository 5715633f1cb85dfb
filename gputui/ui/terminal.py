"""The terminal driver: Textual's Linux driver, made safe for a terminal that goes away.

Why: Textual writes through a thread with a bounded queue (``WriterThread``, 30 writes).
When the terminal goes (an SSH drop, a tmux pane killed) the first write raises EIO, the
writer thread dies, the queue fills, and the next write blocks the main thread in
``Queue.put`` for ever, inside the app's own shutdown (``App._shutdown`` ->
``LinuxDriver.disable_input``). Here the writer's file drops its output once a write fails,
so the writer thread never dies and no write waits on a terminal that is gone; and when a
SIGHUP finds the terminal hung up, :func:`detach` points the standard streams at
``/dev/null`` so nothing else (a late traceback, a print) can fail or block on it either.
"""

from __future__ import annotations

import contextlib
import os
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver


class TerminalOut:
    """What Textual's writer thread writes to: the terminal, or nowhere once it is gone."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        #: set after the first failed write (EIO, EPIPE) or by the hangup: output is dropped
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._file.write(text)
            except (OSError, ValueError):  # EIO/EPIPE: hung up; ValueError: closed file
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class GpuLinuxDriver(LinuxDriver):
    """:class:`LinuxDriver` writing through :class:`TerminalOut`; never blocks on a dead tty."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.out = TerminalOut(self._file)  # type: ignore[arg-type]
        self._file = self.out  # type: ignore[assignment]

    def write(self, data: str) -> None:
        if self.out.gone:  # not even queued: the queue could be full of undeliverable output
            return
        super().write(data)

    def hung_up(self) -> None:
        """The terminal is gone: drop every later write."""
        self.out.gone = True


def detach(fds: tuple[int, ...]) -> None:
    """Point ``fds`` (the standard streams that were the terminal) at ``/dev/null``."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in fds:
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


def hang_up(driver: object, fds: tuple[int, ...]) -> None:
    """The terminal is gone (SIGHUP): ``driver`` drops all output instead of waiting on it,
    and ``fds`` point at ``/dev/null``."""
    if isinstance(driver, GpuLinuxDriver):
        driver.hung_up()
    detach(fds)
