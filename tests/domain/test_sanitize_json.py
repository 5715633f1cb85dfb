"""Telling a clean JSON page from its bytes: never "clean" where the sanitiser would change
a string, so a page it passes can skip the walk (:mod:`gputui.domain.sanitize_json`)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from gputui.domain.sanitize import UNSAFE_RANGES, clean_tree
from gputui.domain.sanitize_json import json_is_clean, unsafe_utf8


def _encodings(value: Any) -> list[bytes]:
    """The ways a server may write ``value``: raw UTF-8 (the API server, msgspec) or with
    every non-ASCII character escaped (Python's default)."""
    return [msgspec.json.encode(value), json.dumps(value, ensure_ascii=False).encode(),
            json.dumps(value).encode()]


def test_the_byte_pattern_matches_every_unsafe_character_and_its_neighbours_not() -> None:
    for low, high in UNSAFE_RANGES:
        for point in range(max(low, 0x80), high + 1):
            data = chr(point).encode("utf-8", "surrogatepass")
            assert unsafe_utf8().fullmatch(data), hex(point)
        for point in (low - 1, high + 1):
            unsafe = any(a <= point <= b for a, b in UNSAFE_RANGES)
            if point >= 0x80 and not unsafe and not 0xD800 <= point <= 0xDFFF:
                assert not unsafe_utf8().search(chr(point).encode()), hex(point)


def test_every_hostile_character_makes_a_page_not_clean_however_it_is_written() -> None:
    hostile = ["\x1b]2;PWNED\x07", "user\u202eexe.txt", "x" * 10 + "\x9b2J", "a\x7fb",
               "zero\u200bwidth", "bom\ufeff", "tag\U000e0041", "cr\r\nlf", "bs\b", "ff\f",
               "sep\u2028", "\u00ad"]
    for text in hostile:
        for document in ({"metadata": {"name": text}}, {"labels": {text: "v"}}):
            for data in _encodings(document):
                assert not json_is_clean(data), (text, data)


def test_newlines_and_tabs_are_clean_in_values_but_not_in_keys() -> None:
    assert json_is_clean(json.dumps({"message": "line one\nline two\tend"}).encode())
    assert not json_is_clean(json.dumps({"bad\nkey": "v"}).encode())
    assert not json_is_clean(json.dumps({"a": {"bad\tkey": 1}}).encode())
    assert not json_is_clean(b'{"k\\n" :1}')


def test_quotes_slashes_escaped_backslashes_and_plain_unicode_are_clean() -> None:
    annotation = json.dumps({"csi.volume.kubernetes.io/nodeid": json.dumps({"a": "b/c"})})
    assert json_is_clean(annotation.encode())
    assert json_is_clean(b'{"path":"C:\\\\u001b not an escape","url":"a\\/b"}')
    for text in ("caf\u00e9", "\u65e5\u672c\u8a9e", "\U0001f600", "non\u00a0breaking"):
        assert json_is_clean(json.dumps({"x": text}, ensure_ascii=False).encode())
    assert not json_is_clean(json.dumps({"x": "\U0001f600"}).encode())  # a surrogate pair


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(
    st.text(max_size=20), st.lists(st.text(max_size=6), max_size=3),
    st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3)), max_size=4))
def test_a_page_called_clean_is_one_the_sanitiser_leaves_as_it_is(value: Any) -> None:
    for data in _encodings(value):
        if json_is_clean(data):
            decoded = msgspec.json.decode(data)
            assert clean_tree(decoded) == decoded


def test_escaped_backslashes_pair_as_a_decoder_pairs_them() -> None:
    assert not json_is_clean(b'{"a":"x\\\\\\ry"}')  # an escaped backslash, then CR
    assert json_is_clean(b'{"a":"x\\\\ry"}')  # an escaped backslash, then the letter r
    assert json_is_clean(b'{"k\\\\n":1}')  # a key with a backslash and the letter n
    assert not json_is_clean(b'{"k\\\\\\n":1}')  # a key with a backslash and a newline
    assert not json_is_clean(b'{"q\\"\\n":1}')  # an escaped quote does not end the key
    assert json_is_clean(b'{"q":"\\":\\n"}')  # nor does it make a value a key


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from('ab"\\:\n\t\r\x1b{}'), max_size=12),
       st.text(alphabet=st.sampled_from('ab"\\:\n\t\r\x1b{}'), max_size=12))
def test_escape_heavy_keys_and_values_are_never_called_clean_wrongly(key: str,
                                                                     value: str) -> None:
    for data in _encodings({key: value, "k": [value, {value: key}]}):
        if json_is_clean(data):
            decoded = msgspec.json.decode(data)
            assert clean_tree(decoded) == decoded
