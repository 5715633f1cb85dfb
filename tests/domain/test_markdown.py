"""Escaping cluster text for Markdown (:func:`gputui.domain.markdown.md_text`), as a property.

Over arbitrary Unicode, with Markdown's syntax characters drawn often: wherever the summary
puts a string (first in a list item, after a label, in a table cell, as a line of its own),
a CommonMark + GFM parser (markdown-it-py, which Rich ships) sees one text run that reads
exactly as the sanitised string, and no structure: no link, image, code span, HTML,
emphasis, heading, nested list, rule or extra table cell.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from gputui.domain.markdown import md_text
from gputui.domain.sanitize import clean_line

PROPERTY = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: Markdown's syntax, drawn often, among arbitrary characters
TEXT = st.lists(st.one_of(
    st.characters(codec=None),
    st.sampled_from(list("\\`*_{}[]()<>#!|~&$-+=.:;/ 0123456789\t\n\r\x1b")),
    st.sampled_from(["](", "![x](y)", "<img src=x>", "```", "~~~", "&lt;", "&#96;", "---",
                     "1. ", "- ", "# ", "    ", "<http://x>", "**b**", "__u__", "$x$",
                     "[a]: http://x", "\\|"]),
), min_size=1, max_size=40).map("".join)

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _inline(tokens: list[Token]) -> list[Token]:
    return [token for token in tokens if token.type == "inline"]


def _plain(inline: Token) -> str:
    """The inline token's text, asserting it holds nothing but text."""
    children = inline.children or []
    assert {child.type for child in children} <= {"text"}, [c.type for c in children]
    return "".join(child.content for child in children)


def _expected(text: str) -> str:
    return clean_line(text).strip()


@PROPERTY
@given(TEXT)
def test_first_in_a_list_item_it_is_one_text_run(text: str) -> None:
    tokens = PARSER.parse(f"- {md_text(text)}\n")
    types = [token.type for token in tokens]
    if not _expected(text):
        assert types == ["bullet_list_open", "list_item_open", "list_item_close",
                         "bullet_list_close"]
        return
    assert types == ["bullet_list_open", "list_item_open", "paragraph_open", "inline",
                     "paragraph_close", "list_item_close", "bullet_list_close"]
    assert _plain(_inline(tokens)[0]) == _expected(text)


@PROPERTY
@given(TEXT)
def test_after_a_label_it_is_one_text_run(text: str) -> None:
    tokens = PARSER.parse(f"- **Node** on {md_text(text)}: done\n")
    children = [child for child in _inline(tokens)[0].children or []
                if child.type != "text" or child.content]
    assert [child.type for child in children[:3]] == ["strong_open", "text", "strong_close"]
    assert {child.type for child in children[3:]} <= {"text"}
    assert "".join(child.content for child in children[3:]) == f" on {_expected(text)}: done"


@PROPERTY
@given(TEXT)
def test_in_a_table_cell_it_stays_in_its_cell(text: str) -> None:
    tokens = PARSER.parse(f"| A | B |\n| --- | --- |\n| {md_text(text)} | x |\n")
    cells = [token for token in tokens if token.type == "td_open"]
    assert len(cells) == 2
    inline = _inline(tokens)
    assert _plain(inline[2]) == _expected(text) and _plain(inline[3]) == "x"


@PROPERTY
@given(TEXT)
def test_as_a_line_of_its_own_it_is_a_paragraph(text: str) -> None:
    escaped = md_text(text)
    tokens = PARSER.parse(f"Before\n\n{escaped}\n")
    if not escaped:
        return
    types = [token.type for token in tokens]
    assert types == ["paragraph_open", "inline", "paragraph_close"] * 2
    assert _plain(_inline(tokens)[1]) == _expected(text)


def test_the_attacks_spelled_out() -> None:
    assert md_text("x](http://evil)") == "x\\](http://evil)"
    assert md_text("![i](http://evil/p.png)") == "\\!\\[i\\](http://evil/p.png)"
    assert md_text("# heading") == "\\# heading"
    assert md_text("a|b") == "a\\|b"
    assert md_text("`code`") == "\\`code\\`"
    assert md_text("<script>") == "\\<script\\>"
    assert md_text("- item") == "\\- item"
    assert md_text("1. one") == "1\\. one"
    assert md_text("gke-prod-h100-pool-7f3a-4vvm") == "gke-prod-h100-pool-7f3a-4vvm"
    assert md_text("\x1b]52;c;AAAA\x07") == "\\\\x1b\\]52;c;AAAA\\\\x07"
