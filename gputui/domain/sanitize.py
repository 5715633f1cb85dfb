"""Make text from the cluster safe to show: no character of it may drive the terminal.

Every string gputui did not write itself (names, labels, annotations, messages, events, pod
logs, Prometheus and exporter label values, error bodies) is cleaned by this module where it
enters gputui (:mod:`gputui.sources`), so no widget, notification, header, ``check`` output,
audit line or debug log line ever holds a control character.

The rule (README, "Text from the cluster"): every C0 and C1 control character, DEL, the
Unicode line and paragraph separators, lone surrogates and every invisible format character
(bidi embeddings, overrides and isolates, zero-width characters, the byte order mark, tag
characters) is replaced by its escape as Python, ``printf`` and JSON readers know it, one
character at a time: ESC is ``\\x1b``, BEL ``\\x07``, the 8-bit CSI ``\\x9b``, a
right-to-left override ``\\u202e``, a tab, newline and CR ``\\t \\n \\r``.

The rest of an escape sequence is printable already and stays as it was, so
``ESC]2;PWNED BEL`` reads ``\\x1b]2;PWNED\\x07``: inert, and the operator sees what was
attempted. Per character, not per sequence, because a terminal acts on the introducer (ESC,
or the 8-bit CSI/OSC/DCS): once that is gone no sequence is left to parse, whatever its
terminator, and the result is deterministic and idempotent. ASCII stand-ins rather than
control pictures (``␛``): they read in every font, and ``gputui check | cat -v`` shows no
``^[`` (``␛`` is encoded with the byte 0x9b, which ``cat -v`` prints as ``M-^[``).

Tab and newline are kept only where the format has room for them: :func:`clean_text`
(messages, annotations: what a detail pane wraps) keeps both and turns CRLF into LF;
:func:`clean_log` splits a log on LF and keeps tabs; :func:`clean_line` (a name, a label,
a table cell, a header) shows them as ``\\t`` and ``\\n``.

Why here, pure: every source (live, replay, fixtures) and every consumer share one rule,
and a property test can hold it over arbitrary Unicode. Cost: a clean string is recognised
by ``str.isprintable`` (in C) and returned as it is; only a string
that fails it is searched with the precompiled pattern (``benchmarks/bench_sanitize.py``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: every code point that never reaches the terminal as it is (C0 and DEL, C1, soft hyphen,
#: Unicode categories Cf, Zl, Zp and Cs, as of Unicode 15): a test checks it against the
#: running Python's ``unicodedata``
UNSAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C),
    (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x206F), (0xD800, 0xDFFF),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def _char_class(ranges: tuple[tuple[int, int], ...], keep: str) -> str:
    """A regex character class of ``ranges`` less the characters in ``keep``."""
    parts = []
    for low, high in ranges:
        run = [cp for cp in range(low, high + 1) if chr(cp) not in keep]
        if run and len(run) == high - low + 1:
            parts.append(f"\\U{low:08x}-\\U{high:08x}" if low != high else f"\\U{low:08x}")
        else:
            parts.extend(f"\\U{cp:08x}" for cp in run)
    return "[" + "".join(parts) + "]"


#: one line: nothing kept
_LINE = re.compile(_char_class(UNSAFE_RANGES, ""))
#: a log line: tab kept
_LOG = re.compile(_char_class(UNSAFE_RANGES, "\t"))
#: multi-line text: tab and newline kept, CRLF becomes LF
_TEXT = re.compile("\r\n|" + _char_class(UNSAFE_RANGES, "\t\n"))


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


@lru_cache(maxsize=512)
def visible(char: str) -> str:
    """The printable stand-in of one unsafe character (see the module docstring)."""
    named = _NAMED.get(char)
    if named:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _show(found: re.Match[str]) -> str:
    return visible(found.group())


def _text_show(found: re.Match[str]) -> str:
    text = found.group()
    return "\n" if text == "\r\n" else visible(text)


def clean_line(text: str) -> str:
    """``text`` as one safe line: every unsafe character, tab and newline included, shown."""
    if text.isprintable():
        return text
    return _LINE.sub(_show, text)


def clean_text(text: str) -> str:
    """``text`` safe to show, keeping tabs and newlines (CRLF becomes LF)."""
    if text.isprintable() or _plain_lines(text):
        return text
    return _TEXT.sub(_text_show, text)


def _plain_lines(text: str) -> bool:
    """Whether ``text`` is printable but for its tabs and LFs: a multi-line message that
    needs nothing done, told in C (the pattern would take ten times as long)."""
    return "\r" not in text and text.replace("\n", "").replace("\t", "").isprintable()


def clean_log(text: str) -> list[str]:
    """A log, split into safe lines on LF (a CR before it dropped), tabs kept.

    Split on LF only: ``str.splitlines`` would also break on FF, VT, the file/group/record
    separators, NEL and U+2028, which are shown instead, so a line is what ``kubectl logs``
    shows as one.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [_clean_log_line(line.removesuffix("\r")) for line in lines]


def _clean_log_line(line: str) -> str:
    if line.isprintable():
        return line
    return _LOG.sub(_show, line)


def _clean_key(key: Any) -> Any:
    return clean_line(key) if type(key) is str else key


def clean_tree(value: Any) -> Any:
    """A decoded JSON value with every string cleaned: keys as lines (a label key, a field
    name), values as text (:func:`clean_text`).

    What is clean is returned as it is, not copied (a flat map of clean strings, such as
    labels or annotations, is checked in C): the common case allocates nothing. A container
    with anything to change is rebuilt, so an object shared with someone else is never
    changed under them.
    """
    kind = type(value)
    if kind is str:
        return value if value.isprintable() else clean_text(value)
    if kind is dict:
        return _clean_dict(value)
    if kind is list:
        for item in value:
            if clean_tree(item) is not item:
                return [clean_tree(item) for item in value]
    return value


def _clean_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    try:  # the common case, a flat map of clean strings (labels, annotations), in C
        if all(map(str.isprintable, value.values())) and all(map(str.isprintable, value)):
            return value
    except TypeError:  # a value that is not a string (a nested object, a number): walk it
        pass
    for key, item in value.items():
        if _clean_key(key) is not key or clean_tree(item) is not item:
            return {_clean_key(key): clean_tree(item) for key, item in value.items()}
    return value
