"""The credentials gputui holds, remembered so that no text it writes can carry them.

Patterns (``Bearer …``, ``token: …``) catch most leaks, but not all: a library's
``ValueError: Invalid header value b'Bearer abc\\n'`` or a traceback's locals print a token
in shapes no pattern foresees. So every credential gputui loads (bearer tokens, token file
contents, exec plugin output, basic-auth passwords, client key data) is registered here
with :func:`remember`, and :func:`scrub` replaces each one, wherever it appears, by
``[REDACTED]``. Every place that turns an error into text for the operator or a log (the
source errors, ``check``'s error line, the CLI, the debug log, the TUI's crash report)
passes it through :func:`scrub`.
"""

from __future__ import annotations

import threading

REDACTED = "[REDACTED]"
#: shorter values are not secrets worth hunting (and would blank ordinary words: a test
#: kubeconfig's password "secret" would take "secrets" out of every 403 message)
_MIN_LENGTH = 8

_lock = threading.Lock()
_known: tuple[str, ...] = ()


def remember(*values: str | bytes | None) -> None:
    """Register credential values; each is also registered trimmed and as ``repr`` shows it."""
    global _known
    found: set[str] = set()
    for value in values:
        if value is None:
            continue
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        for form in (text, text.strip(), repr(text)[1:-1], repr(text.strip())[1:-1]):
            if len(form) >= _MIN_LENGTH:
                found.add(form)
    if not found:
        return
    with _lock:
        merged = set(_known) | found
        # longest first, so a token is replaced whole before any shorter value inside it
        _known = tuple(sorted(merged, key=len, reverse=True))


def scrub(text: str) -> str:
    """``text`` with every remembered credential replaced by ``[REDACTED]``."""
    known = _known
    for value in known:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def forget_all() -> None:
    """Drop every remembered value (tests that load many kubeconfigs in one process)."""
    global _known
    with _lock:
        _known = ()
