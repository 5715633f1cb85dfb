"""Tell, from a JSON text's bytes, that no string in it needs cleaning.

Why: every string of every object from the cluster goes through :func:`~gputui.domain.
sanitize.clean_tree` before the domain sees it, and at 5,000 nodes walking 45,000 decoded
objects (or encoding them back to look) costs a tenth of a ``gputui check``. Nearly every
page holds nothing to clean, and that can be told from the bytes the server sent, in C,
before anything is decoded. A page that :func:`json_is_clean` passes decodes to strings
that :mod:`gputui.domain.sanitize` would return unchanged; any other page is cleaned as
before, object by object.

What a character the sanitiser changes looks like in a JSON text (RFC 8259):

* a C0 control character (and so ESC) cannot appear raw inside a string (decoders refuse
  it), only escaped: ``\\b \\f \\r`` or ``\\u00XX``; ``\\n`` and ``\\t`` are kept by
  :func:`~gputui.domain.sanitize.clean_text` in values but shown in keys
  (:func:`~gputui.domain.sanitize.clean_line`), so they count only inside a key;
* DEL may appear raw (byte 0x7f) or as ``\\u007f``;
* every other unsafe character (C1, soft hyphen, the bidi, zero-width and tag characters,
  line and paragraph separators, surrogates) is non-ASCII: raw, as its UTF-8 bytes, whose
  patterns are built here from :data:`~gputui.domain.sanitize.UNSAFE_RANGES` (so the two
  cannot drift apart), or escaped as ``\\uXXXX``.

Escapes are read left to right as pairs (``\\\\u0041`` is an escaped backslash, then text),
as a decoder reads them; a string holding an escape that might matter makes the whole page
"not known clean", which is only slower, never wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from gputui.domain.sanitize import UNSAFE_RANGES

_Trie = dict[int, "_Trie"]


def _byte_class(values: list[int]) -> bytes:
    """A regex matching one byte of ``values`` (sorted), ranges joined."""
    if len(values) == 1:
        return re.escape(bytes(values))
    parts, start = [], values[0]
    for previous, value in zip(values, values[1:] + [-1], strict=True):
        if value != previous + 1:
            low, high = re.escape(bytes([start])), re.escape(bytes([previous]))
            parts.append(low if start == previous else low + b"-" + high)
            start = value
    return b"[" + b"".join(parts) + b"]"


def _node_pattern(node: _Trie) -> bytes:
    """A regex for the byte sequences below one trie node: children with the same rest
    share a byte class (UTF-8 is prefix-free, so every sequence ends at a leaf)."""
    by_rest: dict[bytes, list[int]] = {}
    for byte, child in sorted(node.items()):
        by_rest.setdefault(_node_pattern(child) if child else b"", []).append(byte)
    parts = [_byte_class(values) + rest for rest, values in by_rest.items()]
    return parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"


def _pattern(sequences: Iterable[bytes]) -> bytes:
    trie: _Trie = {}
    for sequence in sequences:
        node = trie
        for byte in sequence:
            node = node.setdefault(byte, {})
    return _node_pattern(trie)


@cache
def unsafe_utf8() -> re.Pattern[bytes]:
    """The UTF-8 encodings of every unsafe non-ASCII code point (surrogates as CESU-style
    bytes, which a decoder refuses anyway). Built on the first page that is not ASCII (20
    ms, which a cold start of a cluster whose text is all ASCII need not pay)."""
    points = (point for low, high in UNSAFE_RANGES for point in range(max(low, 0x80), high + 1))
    return re.compile(_pattern(chr(point).encode("utf-8", "surrogatepass")
                               for point in points))


#: the escapes that may stand where the sanitiser keeps them, most frequent first (any
#: other, ``\b \f \r``, is a control character it always shows)
_ALLOWED = (b"\\n", b'\\"', b"\\t", b"\\/", b"\\u")
_UNICODE_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})")
#: a string holding a ``\n`` or ``\t`` escape and followed by a colon: a key, which
#: :func:`~gputui.domain.sanitize.clean_line` changes. Searched once escaped quotes are
#: gone, so every quote left delimits a string; a search that starts at a closing quote
#: spans text outside strings, which holds no backslash, so only real keys match.
_KEY_WITH_BREAK = re.compile(rb'"(?=[^"]*\\[nt])[^"]*+"[ \t\r\n]*:')


def _unsafe_point(point: int) -> bool:
    return any(low <= point <= high for low, high in UNSAFE_RANGES)


def _escapes_clean(data: bytes) -> bool:
    """Whether every escape in ``data`` stands for a character the sanitiser keeps where
    it stands (a newline or tab only in a value, never in a key). Counted in C: with the
    escaped backslashes taken out (left to right, as a decoder pairs them), every backslash
    left starts an escape; a Python step only per ``\\uXXXX`` escape (which the API server
    does not write)."""
    text = data.replace(b"\\\\", b"")
    escapes = text.count(b"\\")
    counts: dict[bytes, int] = {}
    for kind in _ALLOWED:
        counts[kind] = text.count(kind)
        escapes -= counts[kind]
        if escapes == 0:
            break
    else:  # an escape of another kind
        return False
    if counts.get(b"\\u") and any(_unsafe_point(int(found.group(1), 16))
                                  for found in _UNICODE_ESCAPE.finditer(text)):
        return False
    if counts.get(b"\\n") or counts.get(b"\\t"):
        return not _KEY_WITH_BREAK.search(text.replace(b'\\"', b""))
    return True


def json_is_clean(data: bytes) -> bool:
    """Whether every string the JSON text ``data`` decodes to is one the sanitiser leaves
    as it is (see the module docstring); False means "not known", never "dirty"."""
    if b"\x7f" in data:
        return False
    if not data.isascii() and unsafe_utf8().search(data):
        return False
    return b"\\" not in data or _escapes_clean(data)
