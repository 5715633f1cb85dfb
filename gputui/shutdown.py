"""The one owner of how a gputui process ends: its clean-ups, its signal handlers, its exit.

Why one owner: signal handlers were installed in three places (the TUI's exit guard, the key
files of ``gputui check``, ``gputui sim``), each saving and restoring the others' handlers,
and the TUI's fast exit ran the interpreter's private ``atexit._run_exitfuncs`` to get the
key files removed. Now:

* a clean-up (remove the temporary key files, flush the debug log) is registered here with
  :func:`on_exit`; :func:`run_cleanups` runs each once, at interpreter exit, at a fast exit
  (:func:`end_process`) and when a signal ends the process (:func:`die_by_signal`), whichever
  comes first; one failing never keeps the next from running;
* every :mod:`signal` handler is installed through :func:`handle_signals`, which gives the
  previous ones back when asked (tests run many apps in one process);
* :func:`end_process` is the fast exit: clean-ups, logs and standard streams flushed, then
  ``os._exit`` (daemon threads still waiting on a silent server are dropped instead of
  waking in a finalising interpreter, which aborted the process in 1 exit of 3).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from types import FrameType
from typing import NoReturn

log = logging.getLogger("gputui.shutdown")

_lock = threading.Lock()
_cleanups: list[Callable[[], None]] = []
_hooked = False

SignalHandler = Callable[[signal.Signals], None]


def on_exit(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` once when the process ends, however it ends (registered once)."""
    global _hooked
    with _lock:
        if cleanup not in _cleanups:
            _cleanups.append(cleanup)
        if not _hooked:
            atexit.register(run_cleanups)  # the ordinary way out runs them too
            _hooked = True


def run_cleanups() -> None:
    """Run every registered clean-up now, last registered first, each at most once."""
    with _lock:
        cleanups = list(reversed(_cleanups))
        _cleanups.clear()
    for cleanup in cleanups:
        try:
            cleanup()
        except Exception:  # broad: one clean-up failing must not keep the process
            log.exception("while cleaning up")
    flush_logs()


def handle_signals(handler: SignalHandler, signals: Iterable[signal.Signals]
                   ) -> Callable[[], None]:
    """Call ``handler`` on each of ``signals``; returns the call that puts the previous
    handlers back. From the main thread only (elsewhere nothing is installed: a handler
    can only be set there, and tests run apps in other threads)."""
    previous: dict[signal.Signals, object] = {}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        handler(signal.Signals(signum))

    for sig in signals:
        with contextlib.suppress(ValueError):
            previous[sig] = signal.signal(sig, on_signal)

    def restore() -> None:
        for sig, old in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, old)  # type: ignore[arg-type]
        previous.clear()

    return restore


def die_by_signal(sig: signal.Signals) -> None:
    """Run the clean-ups, then die of ``sig`` with its default action, so the exit status
    still says which signal ended the process (a script's ``$?`` is 143 on SIGTERM)."""
    run_cleanups()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def end_process(code: int) -> NoReturn:
    """The fast exit: clean-ups, logs and standard streams flushed, then ``os._exit``."""
    run_cleanups()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a terminal that is gone: nothing to flush to
            stream.flush()
    os._exit(code)


def flush_logs() -> None:
    """Flush every root log handler (best effort: the process may end right after)."""
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
