"""SIGHUP, SIGTERM and quitting stop every running action at once and end the process in 5 s.

Why not the event loop's signal handlers: an SSH drop takes the terminal away, Textual's
writer thread dies on the first failed write, its bounded queue fills and the main thread
blocks in ``Queue.put`` inside the app's shutdown; a handler that needs the event loop never
runs again, feeds keep watching the API server and a drain keeps evicting (25 evictions after
SIGTERM, 22 s to exit; processes found alive an hour later). So the handler here is a plain
:mod:`signal` handler (it runs in the main thread even while it waits on a lock) that only
writes one byte down a pipe; :class:`ExitGuard`'s own thread then, in order:

1. stops every running action's cancel with the reason (``SIGHUP``, ``SIGTERM``, ``quit``):
   nothing more is sent (:mod:`gputui.actions.guard`), and the sources and feeds are stopped;
2. gives the running actions up to :data:`ACTION_GRACE` seconds to return, so their outcome
   reaches the audit log;
3. asks the app to exit the normal way (restoring the terminal where there still is one);
4. in the real program (``hard_exit``), ends the process with ``os._exit`` :data:`EXIT_DEADLINE`
   seconds after the request if it is still there, logs flushed first.

And once the app has exited, :func:`gputui.shutdown.end_process` ends the real program without the
interpreter's finalisation: a daemon thread still waiting on a silent server (a request
abandoned at the stop) that wakes while the interpreter finalises aborts the process (SIGABRT,
seen in 1 exit of 3), and the executor threads of Textual's workers would be joined first.

Exit codes follow the shell's convention, 128 + the signal number.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable

from textual.app import App

from gputui import shutdown
from gputui.actions.base import Cancel
from gputui.shutdown import end_process

__all__ = ["AppExit", "ExitGuard", "end_process", "terminal_fds", "terminal_gone"]

#: signal -> (reason, exit code)
SIGNAL_EXITS = {signal.SIGHUP: ("SIGHUP", 129), signal.SIGTERM: ("SIGTERM", 143)}
#: seconds a running action is given to reach its outcome after the stop request
ACTION_GRACE = 2.0
#: seconds after the stop request by which the process is gone, whatever the terminal does
EXIT_DEADLINE = 4.5
#: seconds the watchdog gives the clean-ups (:mod:`gputui.shutdown`) before it ends the process
CLEANUP_WAIT = 0.3

log = logging.getLogger("gputui.ui.exit")


class ExitGuard:
    """Who runs now, and the way out; one per app.

    Args:
        request_exit: asks the app to exit with a code (from any thread; must not block).
        stop_feeds: stops the sources and feeds (no request to the server after it).
        hangup: called when a SIGHUP finds the terminal gone (output is dropped from then).
    """

    def __init__(self, request_exit: Callable[[int], None], stop_feeds: Callable[[], None],
                 hangup: Callable[[], None]) -> None:
        self._request_exit = request_exit
        self._stop_feeds = stop_feeds
        self._hangup = hangup
        self._lock = threading.Condition()
        self._running: set[Cancel] = set()
        #: the wake-up of the guard's thread: a pipe, since a signal handler may not take a
        #: lock the interrupted main thread could hold (an Event's); -1 when not installed
        self._wake_read = self._wake_write = -1
        self._restore_signals: Callable[[], None] = lambda: None
        self.reason: str | None = None
        self.code = 0
        #: end the process at the deadline (the real program only; tests run apps in-process)
        self.hard_exit = False

    @property
    def exiting(self) -> bool:
        """A stop was requested: the app is on its way out."""
        return self.reason is not None

    # ------------------------------------------------------------------ actions
    def track(self, cancel: Cancel) -> None:
        """An action starts; stopped at once if the app is already on its way out."""
        with self._lock:
            self._running.add(cancel)
        if self.reason is not None:
            cancel.stop(self.reason)

    def finished(self, cancel: Cancel) -> None:
        """An action returned (its audit line is written)."""
        with self._lock:
            self._running.discard(cancel)
            self._lock.notify_all()

    # ------------------------------------------------------------------ the way out
    def install(self) -> None:
        """Start the guard's thread and take SIGHUP and SIGTERM (main thread only)."""
        self._wake_read, self._wake_write = os.pipe()
        threading.Thread(target=self._supervise, args=(self._wake_read,), name="gputui-exit",
                         daemon=True).start()
        self._restore_signals = shutdown.handle_signals(self._on_signal, SIGNAL_EXITS)

    def release(self) -> None:
        """Give the signals back (tests run many apps in one process) and end the thread."""
        self._restore_signals()
        wake_write = self._wake_write
        # the handlers are gone: nothing writes to the pipe after this (the thread closes
        # the read end once it woke)
        self._wake_read = self._wake_write = -1
        if wake_write >= 0:
            _wake(wake_write)
            os.close(wake_write)

    def begin(self, reason: str, code: int) -> None:
        """Ask for the way out; safe inside a signal handler (one byte down a pipe)."""
        if self.reason is None:
            self.reason, self.code = reason, code
        _wake(self._wake_write)

    def _on_signal(self, sig: signal.Signals) -> None:
        reason, code = SIGNAL_EXITS[sig]
        self.begin(reason, code)

    def _supervise(self, wake_read: int) -> None:
        with contextlib.suppress(OSError):
            os.read(wake_read, 1)
        os.close(wake_read)
        if self.reason is None:  # released without a stop request
            return
        started = time.monotonic()
        if self.hard_exit:
            threading.Thread(target=self._watchdog, args=(started + EXIT_DEADLINE,),
                             name="gputui-exit-deadline", daemon=True).start()
        log.info("stopping (%s): %d action(s) running", self.reason, len(self._running))
        with self._lock:
            running = list(self._running)
        for cancel in running:
            cancel.stop(self.reason)
        if self.hard_exit and self.reason == "SIGHUP" and terminal_gone():
            _quietly(self._hangup)
        threading.Thread(target=_quietly, args=(self._stop_feeds,), name="gputui-exit-feeds",
                         daemon=True).start()
        with self._lock:
            self._lock.wait_for(lambda: not self._running,
                                max(0.0, started + ACTION_GRACE - time.monotonic()))
        _quietly(lambda: self._request_exit(self.code))

    def _watchdog(self, deadline: float) -> None:
        """The process is gone by ``deadline``: a shutdown stuck on a dead terminal or on a
        thread waiting for a silent server does not keep it."""
        time.sleep(max(0.0, deadline - time.monotonic()))
        log.warning("still running %.1f s after %s: exiting now", EXIT_DEADLINE, self.reason)
        # the clean-ups (temporary key files, logs), briefly: one of them may be what hangs
        cleanup = threading.Thread(target=shutdown.run_cleanups, daemon=True)
        cleanup.start()
        cleanup.join(CLEANUP_WAIT)
        shutdown.flush_logs()
        os._exit(self.code)


def _wake(fd: int) -> None:
    """One byte down the guard's pipe; no lock taken (safe in a signal handler)."""
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.write(fd, b"x")


def terminal_gone(fd: int = 0) -> bool:
    """True when ``fd`` is no longer a working terminal (hung up: every call answers EIO)."""
    import termios

    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError):
        return True
    return False


def _quietly(call: Callable[[], object]) -> None:
    """Run one step of the way out; a failure is logged, never stops the next step."""
    try:
        call()
    except Exception:  # broad: leaving anyway, the next step must still run
        log.exception("while exiting")


def terminal_fds() -> tuple[int, ...]:
    """The standard streams that are the terminal now (detached when it hangs up)."""
    found = []
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                found.append(fd)
        except OSError:
            continue
    return tuple(found)


class AppExit:
    """The app's side of its :class:`ExitGuard`: the exit asked from the guard's thread, and
    the terminal dropped on SIGHUP.

    Args:
        app: the Textual app (its driver is hung up; ``exit`` is called on its loop).
        stop_feeds: stops the shown session's sources and feeds.
        hard_exit: the real program, gone within :data:`EXIT_DEADLINE` (tests never end it).
    """

    def __init__(self, app: App[int], stop_feeds: Callable[[], None], hard_exit: bool) -> None:
        self.app = app
        self.guard = ExitGuard(self._exit_from_thread, stop_feeds, self._hung_up)
        self.guard.hard_exit = hard_exit
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ttys = terminal_fds()

    def install(self) -> None:
        """(on mount, in the app's loop) Signals now stop the actions and end the app."""
        self._loop = asyncio.get_running_loop()
        self.guard.install()

    def _exit_from_thread(self, code: int) -> None:
        """The exit guard's thread asks for the exit; never blocks on the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(lambda: self.app.exit(return_code=code))

    def _hung_up(self) -> None:
        """The terminal is gone (SIGHUP): drop all output instead of waiting on it."""
        from gputui.ui.terminal import hang_up
        from gputui.ui.textual_private import app_driver

        hang_up(app_driver(self.app), self._ttys)
