"""A closed SSH session (SIGHUP) or a polite kill (SIGTERM) ends the app the normal way.

Why: the default action of both kills the process on the spot, leaving the terminal in raw
mode on the alternate screen and the emulated cluster's threads mid-request. Exiting through
Textual instead restores the terminal (where there still is one) and the app's unmount stops
the source. Exit codes follow the shell's convention, 128 + the signal number.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

#: signal -> exit code
SIGNAL_EXITS = {signal.SIGHUP: 129, signal.SIGTERM: 143}
#: a handler can only be installed from the main thread (tests in other threads skip it)
_CANNOT = (ValueError, RuntimeError, NotImplementedError)


def catch_exit_signals(exit_with: Callable[[int], None]) -> None:
    """Call ``exit_with(code)`` in the running event loop when a signal above arrives."""
    loop = asyncio.get_running_loop()
    for signum, code in SIGNAL_EXITS.items():
        with contextlib.suppress(*_CANNOT):
            loop.add_signal_handler(signum, exit_with, code)


def release_exit_signals() -> None:
    """Give the signals back (tests run many apps in one process)."""
    loop = asyncio.get_running_loop()
    for signum in SIGNAL_EXITS:
        with contextlib.suppress(*_CANNOT):
            loop.remove_signal_handler(signum)
