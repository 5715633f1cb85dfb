"""A cursor kept on a *name* (a stage, a node) in an ordered list, moved by up and down.

Why a name, not an index: a refresh that reorders or adds entries leaves the cursor where the
operator put it. The pipeline pane and the MIG layout both mix in :class:`NameCursorMixin`.
"""

from __future__ import annotations

from collections.abc import Sequence


def step(names: Sequence[str], cursor: str | None, delta: int) -> str | None:
    """The name ``delta`` places from ``cursor``, clamped to the ends (from the first name
    when ``cursor`` is not in ``names``); None when there are no names."""
    if not names:
        return None
    index = names.index(cursor) if cursor in names else 0
    return names[max(0, min(len(names) - 1, index + delta))]


class NameCursorMixin:
    """``cursor_up`` / ``cursor_down`` actions over :meth:`cursor_names`; the widget declares
    its own ``cursor`` reactive (what redraws when it moves is the widget's business)."""

    cursor: str | None

    def cursor_names(self) -> Sequence[str]:
        """The names the cursor moves over, in screen order."""
        raise NotImplementedError

    def _move(self, delta: int) -> None:
        moved = step(self.cursor_names(), self.cursor, delta)
        if moved is not None:
            self.cursor = moved

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_cursor_down(self) -> None:
        self._move(1)
