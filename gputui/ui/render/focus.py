"""The detail pane's title: which node it shows, what the actions act on, where the keys are.

Why a title: after ``enter`` the arrow keys move the pane's cursor (its stages), not the
node list's; unsaid, an operator pressed ``↓`` for the next node and marked the wrong ones.
One visible focus: a ``▶`` in the title while the pane has the keys (``capture-pane`` and a
screen reader see it; a border colour alone they do not).
"""

from __future__ import annotations


def detail_title(tab: str, node: str | None, marked: int, focused: bool) -> str:
    """``Pipeline: gpu-7``, ``... · actions: the 3 marked`` when marks decide the targets,
    and ``▶ ... · keys here (esc: back to the list)`` while the pane has the keys."""
    text = f"{tab}: {node or 'no node selected'}"
    if marked:  # then the actions act on the marks, not on this node
        text += f" · actions: the {marked} marked"
    return f"▶ {text} · keys here (esc: back to the list)" if focused else text
