"""Errors the sources raise to their callers, each one line an operator can act on.

``gputui check`` prints ``gputui: <message>`` and exits 2 for a :class:`SourceError`; the TUI
shows the same line in its header. No traceback ever reaches the operator for a condition
they can fix (a missing kubeconfig, an unknown context, a server that does not answer).
No credential either: every message is passed through :func:`~gputui.sources.secrets.scrub`.
"""

from __future__ import annotations

from typing import Any

from gputui.domain.sanitize import clean_line
from gputui.sources.secrets import scrub


class SourceError(ConnectionError):
    """Could not connect to (or read from) the cluster; ``str(error)`` is one line."""

    def __init__(self, message: str):
        super().__init__(_one_line(scrub(str(message))))


class ApiStatusError(SourceError):
    """The API server answered with an error ``Status`` (403, 404, 410, 5xx ...)."""

    def __init__(self, code: int, reason: str, message: str,
                 retry_after: float | None = None):
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = clean_line(reason)
        self.detail = clean_line(message)
        #: seconds the server asked us to wait (``Retry-After``), None when it did not say
        self.retry_after = retry_after


class UnreachableError(SourceError):
    """The API server could not be reached at all (refused, timed out, TLS failure)."""

    def __init__(self, message: str, no_answer: bool = False):
        super().__init__(message)
        #: no answer at all (refused, dropped, timed out): the server is down or cut off, and
        #: retrying for long would only delay saying so
        self.no_answer = no_answer


class AnswerError(SourceError):
    """A server answered, but not in a shape gputui can read (a sample value that is not a
    number, a list where an object belongs): the reader names what was wrong, and the
    component that asked falls back or keeps its last good reading instead of dying."""


class WriteError(Exception):
    """A write the server refused; ``status`` is the HTTP code, ``reason`` its one sentence.

    Raised by :mod:`gputui.sources.writer`, caught by the actions (re-exported by
    :mod:`gputui.actions.base`, the actions' vocabulary).

    ``status`` 0 means nothing reached a server: read-only mode refused it before sending, or
    the server could not be reached.
    """

    def __init__(self, status: int, reason: str, retry_after: float | None = None,
                 budget: str | None = None):
        reason = clean_line(scrub(reason))  # it quotes the server, and may quote a secret
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after
        #: for a 429 eviction: the PodDisruptionBudget that refused it, when the server named it
        self.budget = clean_line(budget) if budget else budget


def status_parts(status: Any) -> tuple[int, str, str]:
    """``(code, reason, message)`` of a ``Status`` body (an error answer or a watch ERROR
    event), read leniently: a field of the wrong type reads as absent (code 0, "")."""
    if not isinstance(status, dict):
        return 0, "", ""
    code = status.get("code")
    if isinstance(code, str) and code.isdigit() and len(code) <= 3:
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 999:
        code = 0
    reason, message = status.get("reason"), status.get("message")
    return (code, reason if isinstance(reason, str) else "",
            message if isinstance(message, str) else "")


def _one_line(message: str) -> str:
    """Collapse a multi-line library message into its first meaningful line, cleaned (it
    may quote the server)."""
    for line in str(message).splitlines():
        if line.strip():
            return clean_line(line.strip())
    return "unknown error"
