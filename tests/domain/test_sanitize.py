"""The sanitising rule (:mod:`gputui.domain.sanitize`): no character of cluster text can drive
the terminal, and the text stays readable.

Properties over arbitrary Unicode (with the control and format ranges drawn often), then the
attacks of issue 18 spelled out: title (OSC 2), clipboard (OSC 52), screen clearing (CSI),
8-bit C1 introducers, string controls (DCS/APC/PM/SOS), bidi overrides.
"""

from __future__ import annotations

import sys
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputui.domain.sanitize import (
    UNSAFE_RANGES,
    clean_line,
    clean_log,
    clean_text,
    clean_tree,
)

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: characters a terminal or a reader must never receive as they are
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_ESCAPISH = [chr(c) for low, high in UNSAFE_RANGES for c in range(low, min(high, low + 40) + 1)]
#: arbitrary Unicode, with the dangerous ranges and escape-sequence pieces drawn often
TEXT = st.lists(st.one_of(
    st.characters(codec=None),
    st.sampled_from(_ESCAPISH),
    st.sampled_from(["\x1b", "\x9b", "\x9d", "\x90", "\x07", "\r\n", "\n", "\t", "]", "[", ";",
                     "\\", "P", "_", "^", "X", "2J", "52;c;"]),
), max_size=60).map("".join)


def _forbidden(char: str) -> bool:
    """A control (C0, DEL, C1), a format character, a line/paragraph separator, a surrogate."""
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def _assert_safe(text: str, allowed: str) -> None:
    bad = [char for char in text if _forbidden(char) and char not in allowed]
    assert not bad, f"{text!r} still holds {bad!r}"
    assert "\x1b" not in text and "\x7f" not in text
    assert not _BIDI & set(text)


@PROPERTY
@given(TEXT)
def test_a_line_holds_no_control_or_format_character(text: str) -> None:
    _assert_safe(clean_line(text), allowed="")


@PROPERTY
@given(TEXT)
def test_text_keeps_only_tab_and_newline(text: str) -> None:
    _assert_safe(clean_text(text), allowed="\t\n")


@PROPERTY
@given(TEXT)
def test_log_lines_keep_only_tab(text: str) -> None:
    for line in clean_log(text):
        _assert_safe(line, allowed="\t")


@PROPERTY
@given(TEXT)
def test_cleaning_is_idempotent(text: str) -> None:
    for clean in (clean_line, clean_text):
        once = clean(text)
        assert clean(once) == once
    lines = clean_log(text)
    assert clean_log("".join(line + "\n" for line in lines)) == lines


@PROPERTY
@given(st.text(st.characters(codec=None, exclude_categories=("Cc", "Cf", "Zl", "Zp", "Cs"))))
def test_text_without_controls_comes_back_unchanged(text: str) -> None:
    assert clean_line(text) == text
    assert clean_text(text) == text
    assert clean_log(text) == ([text] if text else [])


@PROPERTY
@given(st.recursive(st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                            st.dictionaries(TEXT, inner, max_size=4)),
                    max_leaves=20))
def test_a_tree_holds_no_unsafe_string_anywhere(value: Any) -> None:
    cleaned = clean_tree(value)

    def walk(node: Any) -> None:
        if isinstance(node, str):
            _assert_safe(node, allowed="\t\n")
        elif isinstance(node, dict):
            for key, item in node.items():
                _assert_safe(key, allowed="")
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    walk(cleaned)
    assert clean_tree(cleaned) == cleaned


def test_unsafe_ranges_cover_every_control_and_format_character_python_knows() -> None:
    """The hand-written ranges (kept literal for speed at import) against ``unicodedata``:
    a newer Python with a newer Unicode fails here if it adds a format character."""
    covered = {c for low, high in UNSAFE_RANGES for c in range(low, high + 1)}
    missing = [hex(c) for c in range(sys.maxunicode + 1)
               if c not in covered and _forbidden(chr(c))]
    assert not missing


@pytest.mark.parametrize(("attack", "shown"), [
    ("\x1b]2;PWNED\x1b\\", "\\x1b]2;PWNED\\x1b\\"),        # set the title, ST-terminated
    ("\x1b]0;PWNED\x07", r"\x1b]0;PWNED\x07"),              # title, BEL-terminated
    ("\x1b]52;c;cHduZWQ=\x07", r"\x1b]52;c;cHduZWQ=\x07"),  # write the clipboard
    ("\x1b[2J\x1b[H", r"\x1b[2J\x1b[H"),                    # clear the screen, cursor home
    ("\x9b2J", r"\x9b2J"),                                  # 8-bit CSI
    ("\x9d2;PWNED\x9c", r"\x9d2;PWNED\x9c"),                # 8-bit OSC and ST
    ("\x1bP1$r\x1b\\", "\\x1bP1$r\\x1b\\"),               # DCS
    ("\x1b_hidden\x1b\\", "\\x1b_hidden\\x1b\\"),         # APC
    ("\x1b^pm\x1bXsos", r"\x1b^pm\x1bXsos"),                # PM, SOS
    ("a\x1b", r"a\x1b"),                                    # lone ESC at the end
    ("rm\x7f\x08\x08 -rf", r"rm\x7f\x08\x08 -rf"),          # DEL, backspaces
    ("user\u202eexe.txt", r"user\u202eexe.txt"),            # right-to-left override
    ("\u2066admin\u2069", r"\u2066admin\u2069"),            # bidi isolate
    ("zero\u200bwidth\ufeff", r"zero\u200bwidth\ufeff"),
    ("tag\U000e0041", r"tag\U000e0041"),                    # invisible tag character
    ("\ud800", r"\ud800"),                                  # a lone surrogate (unprintable)
])
def test_each_attack_is_shown_inert_and_readable(attack: str, shown: str) -> None:
    assert clean_line(attack) == shown
    assert clean_text(attack) == shown
    assert clean_log(attack) == [shown]
    assert shown.isascii()  # `| cat -v` shows no ^[ (a control picture would: ␛ is E2 90 9B)


def test_tabs_and_newlines_follow_the_format() -> None:
    text = "col1\tcol2\r\nnext line\rover\n"
    assert clean_line(text) == r"col1\tcol2\r\nnext line\rover\n"
    assert clean_text(text) == "col1\tcol2\nnext line\\rover\n"
    assert clean_log(text) == ["col1\tcol2", "next line\\rover"]
    # only LF splits a log: form feed, NEL and U+2028 are shown, not line breaks
    assert clean_log("a\x0cb\x85c\u2028d") == [r"a\x0cb\x85c\u2028d"]


def test_a_clean_tree_is_returned_as_it_is() -> None:
    labels = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "kubernetes.io/os": "linux"}
    node = {"metadata": {"name": "gpu-1", "labels": labels}, "spec": {"unschedulable": True}}
    assert clean_tree(node) is node
    dirty = {"metadata": {"name": "gpu-1", "labels": labels,
                          "annotations": {"note\x1b": "\x1b]2;PWNED\x07"}}}
    cleaned = clean_tree(dirty)
    assert cleaned["metadata"]["annotations"] == {r"note\x1b": r"\x1b]2;PWNED\x07"}
    assert cleaned["metadata"]["labels"] is labels
