"""Every private part of Textual gputui touches, listed and checked here.

Why a module of its own: a private name can change in any Textual release, and a change
must be noticed, not crash an operator's session. It is all here (the tables, once surgery
on ``DataTable``'s private caches, are line tables that need none), and
``tests/ui/test_textual_private.py`` fails when another module names a private Textual
module or member. Each use has a public fallback, taken when :data:`PROBLEMS` is not empty:

==============================================  ===========================================
``App._fatal_error``, ``App._exit_renderables``  the crash report without locals or secrets
``App._close_messages_no_wait``                 (:mod:`gputui.ui.crash`); fallback:
                                                Textual's own report (still scrubbed by the
                                                debug log, but with locals on screen)
``App._driver``                                 the driver told a SIGHUP hung the terminal
                                                up; fallback: none is told
``LinuxDriver._file``                           the terminal's file, wrapped so a dead
                                                terminal never blocks (:mod:`.terminal`);
                                                fallback: Textual's LinuxDriver
``textual._context.NoActiveAppError``           what ``widget.app`` raises before mounting;
                                                fallback: ``RuntimeError``, its base
==============================================  ===========================================
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from textual.app import App

log = logging.getLogger("gputui.ui")

#: the Textual release these were read from (pyproject pins it exactly)
TESTED_TEXTUAL = "8.2.8"

try:
    from textual._context import NoActiveAppError
except ImportError:  # moved: its base still catches it
    NoActiveAppError = RuntimeError  # type: ignore[misc, assignment]


def _problems() -> list[str]:
    """What of the list above the running Textual lacks (empty: all there)."""
    problems = [f"App.{name} is gone" for name in ("_fatal_error", "_close_messages_no_wait")
                if not callable(getattr(App, name, None))]
    app_init = inspect.getsource(App.__init__)
    problems += [f"App.__init__ no longer sets {name}"
                 for name in ("self._exit_renderables", "self._driver")
                 if name not in app_init]
    try:
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:  # not a Linux build of Textual: no driver to wrap
        return problems + ["no LinuxDriver"]
    if "self._file" not in inspect.getsource(LinuxDriver.__init__):
        problems.append("LinuxDriver.__init__ no longer sets self._file")
    return problems


#: what is off (empty: every private use above is safe with this Textual)
PROBLEMS: tuple[str, ...] = tuple(_problems())
if PROBLEMS:
    log.warning("Textual's private parts changed, falling back: %s", "; ".join(PROBLEMS))
#: the crash report may replace Textual's (``crash.QuietCrash``)
CRASH_HOOK = not any(p.startswith("App.") and "self._driver" not in p for p in PROBLEMS)
#: the terminal's file may be wrapped (``terminal.GpuLinuxDriver``)
DRIVER_FILE = not any("LinuxDriver" in p for p in PROBLEMS)
#: the app keeps its driver where it is read (a SIGHUP tells it)
APP_DRIVER = not any("self._driver" in p for p in PROBLEMS)


def app_driver(app: App[Any]) -> object | None:
    """The app's driver (None before it runs, or when Textual no longer keeps it there)."""
    return getattr(app, "_driver", None) if APP_DRIVER else None


def exit_renderables(app: App[Any]) -> list[Any]:
    """What Textual prints after the app exits (the crash report goes here)."""
    found: list[Any] = getattr(app, "_exit_renderables")
    return found


def close_messages_no_wait(app: App[Any]) -> None:
    """Textual's own way out of a fatal error, without waiting on the message queue."""
    getattr(app, "_close_messages_no_wait")()


__all__ = ["APP_DRIVER", "CRASH_HOOK", "DRIVER_FILE", "PROBLEMS", "NoActiveAppError", "app_driver",
           "close_messages_no_wait", "exit_renderables"]
