"""The one line of a plan's impact that the confirmation dialog shows above the fold.

A plan's Impact section comes after its changes, kubectl lines and steps: at 80x24 it is
below the fold, and what the action does to the fleet (the GPU pods it evicts, the nodes it
takes down) must be read before ``y`` without scrolling. So the dialog's first lines say it
in one line: the impact's headline, and how many more lines the section below holds.
"""

from __future__ import annotations

from collections.abc import Sequence

#: the longest summary (80 columns less the dialog's frame, padding and "Impact: ")
WIDTH = 66


def _split(line: str) -> tuple[str, str, str]:
    """``line.partition(": ")`` at the first ": " outside single quotes: a quoted command
    name ("use 'upgrade: canary'") is one name, not a heading and its details."""
    quoted = False
    for index, char in enumerate(line):
        if char == "'":
            quoted = not quoted
        elif not quoted and line.startswith(": ", index):
            return line[:index], ": ", line[index + 2:]
    return line, "", ""


def _head(line: str) -> str:
    """What one top-level impact line is about: the words before its first ": " (a line
    that starts with a node name, "gke-a: 3 pods ...: ...", gives the words after it)."""
    head, sep, rest = _split(line)
    if sep and " " not in head:
        head = _split(rest)[0]
    return head.rstrip(":").strip()


def impact_summary(impact: Sequence[str], width: int = WIDTH) -> str:
    """"1 node made unavailable · 1 GPU pod running there · 3 pods (listed from the
    server)": the heads of the impact's top-level lines (indented lines are their lists),
    as many as fit in ``width``; "" for no impact. The full section stays below."""
    heads = [_head(line) for line in impact if line.strip() and not line[:1].isspace()]
    heads = [head for head in heads if head]
    if not heads:
        return ""
    text = " · ".join(heads)
    return text if len(text) <= width else text[:width - 1].rstrip(" ·") + "…"
