"""Text from the cluster as inert Markdown: it reads as written and builds no structure.

Why: the handoff summary (:mod:`gputui.domain.summary`) is pasted into tickets, chats and
runbooks that render Markdown. A node name, a pod message or an audit target is hostile
text (README, "Text from the cluster"): ``x](https://evil)`` would become a link, a pipe
would split a table cell, a backtick would open a code span, ``<img ...>`` would be HTML
and ``# ...`` a heading. So every such string goes through :func:`md_text`:

1. :func:`gputui.domain.sanitize.clean_line`: no control or invisible character, and no
   line break (a string can never start a line of its own, so block syntax at the start of
   a line, ``-``, ``+``, ``1.``, ``===``, is out of reach);
2. outer whitespace dropped (four leading spaces would make an indented code block inside
   a list item; trailing spaces a hard break);
3. a backslash before every ASCII punctuation character that has inline meaning in
   CommonMark or GitHub Flavored Markdown: ``\\ ` * _ { } [ ] < > # ! | ~ & $``
   (CommonMark 0.31, "Backslash escapes": any ASCII punctuation may be escaped, and the
   escaped character is literal text; GFM tables honour ``\\|`` inside a cell).
   ``&`` is escaped so that no entity (``&lt;``, ``&#96;``) can be spelt by the input,
   ``$`` so that GitHub's math (``$...$``) cannot be opened;
4. a leading ``-``, ``+``, ``=`` or ``1.`` escaped too: the summary puts cluster text
   first in a list item (``- <node>: ...``), where it would open a nested list or a rule.

Hyphens, dots, colons and parentheses stay as they are: node names and messages are full
of them, and they have no inline meaning of their own (a link needs ``](``, and ``]`` is
escaped). Not covered: a renderer's bare-URL autolinking (GFM's ``www.`` and
``https://`` extension) turns a URL in a message into a link to that URL, which is the text
shown anyway.
"""

from __future__ import annotations

import re

from gputui.domain.sanitize import clean_line

#: ASCII punctuation with inline meaning in CommonMark or GFM (see the module docstring)
SPECIAL = "\\`*_{}[]<>#!|~&$"
_SPECIAL = re.compile("([" + re.escape(SPECIAL) + "])")


#: what opens a block when it starts a line's content (after our ``- ``): a list item
#: (``-``, ``+``, ``1.``, ``1)``), a thematic break (``---``) or a setext underline (``===``)
_BLOCK_START = re.compile(r"^(?:([-+=])|(\d{1,9})([.)]))")


def md_text(text: str) -> str:
    """``text`` (from the cluster or the audit log) as one line of literal Markdown text."""
    escaped = _SPECIAL.sub(r"\\\1", clean_line(text).strip())
    return _BLOCK_START.sub(_escape_start, escaped, count=1)


def _escape_start(found: re.Match[str]) -> str:
    if found.group(1):
        return "\\" + found.group(1)
    return f"{found.group(2)}\\{found.group(3)}"


def md_list(items: tuple[str, ...] | list[str]) -> str:
    """Names as a comma-separated run of literal text (``-`` for none)."""
    return ", ".join(md_text(item) for item in items) or "-"
