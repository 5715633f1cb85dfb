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

import re
import threading

REDACTED = "[REDACTED]"
#: shorter values are not secrets worth hunting (and would blank ordinary words: a test
#: kubeconfig's password "secret" would take "secrets" out of every 403 message)
_MIN_LENGTH = 8

_lock = threading.Lock()
#: first :data:`_MIN_LENGTH` characters -> the remembered values that start so; replaced
#: whole by :func:`remember` (readers take the mapping without the lock)
_heads: dict[str, tuple[str, ...]] = {}


def remember(*values: str | bytes | None) -> None:
    """Register credential values; each is also registered trimmed and as ``repr`` shows it."""
    global _heads
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
        grouped: dict[str, set[str]] = {head: set(values) for head, values in _heads.items()}
        for form in found:
            grouped.setdefault(form[:_MIN_LENGTH], set()).add(form)
        _heads = {head: tuple(values) for head, values in grouped.items()}


def scrub(text: str) -> str:
    """``text`` with every remembered credential, and any cut-off start of one, replaced.

    A server or library that quotes a request header often cuts it (the first 100
    characters of ``Bearer tok-...``), so a whole-value match is not enough: wherever the
    first :data:`_MIN_LENGTH` characters of a credential appear, the run of characters
    that goes on matching it is redacted, however short of the whole it stops. A URL's
    ``user:password@`` is redacted whatever gputui knows of it.
    """
    spans = [span for head, values in _heads.items() if head in text
             for span in _runs(text, head, values)]
    if spans:
        text = _replace_spans(text, spans)
    return _URL_USERINFO.sub(r"\1" + REDACTED + "@", text) if "@" in text else text


#: ``scheme://user:password@``: a credential in any URL, known or not. Only the characters a
#: URL's userinfo may hold unescaped (no quote, comma, slash or blank), so a match never runs
#: across the JSON or prose around a URL into a later ``@`` (``"user":"alice@example.com"``)
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[\w.~%!$&()*+;=-]*:[\w.~%!$&()*+;=:-]*@")


def _runs(text: str, head: str, values: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each run of ``text`` that starts like one of ``values``: at each
    place ``head`` appears, the longest run any of them goes on matching."""
    spans, start = [], 0
    while (found := text.find(head, start)) >= 0:
        end = max(_matched(text, found, value) for value in values)
        spans.append((found, end))
        start = found + 1
    return spans


def _matched(text: str, at: int, value: str) -> int:
    """Where the run of ``text`` from ``at`` that equals the start of ``value`` ends."""
    end, limit = at + _MIN_LENGTH, min(len(text), at + len(value))
    while end < limit and text[end] == value[end - at]:
        end += 1
    return end


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by ``[REDACTED]``."""
    out, cursor = [], 0
    for start, end in sorted(spans):
        if end <= cursor:
            continue
        if start < cursor:
            start = cursor
        else:
            out.append(text[cursor:start])
            out.append(REDACTED)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def forget_all() -> None:
    """Drop every remembered value (tests that load many kubeconfigs in one process)."""
    global _heads
    with _lock:
        _heads = {}
