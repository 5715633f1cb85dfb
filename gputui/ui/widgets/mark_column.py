"""``MarkColumn``: the node list's first column, which says three things in two cells.

``▶`` first: the row under the cursor, the node the keys act on when none is marked (a
highlighted row is only a colour: a screen reader or ``tmux capture-pane`` sees the ``▶``).
Then ``●``: the node is marked (``space``), so the next action targets it; ``⟳``: a running
operation (``:ops``) works on it. A mark wins, because it says what the next key press
does. Kept apart from :class:`~gputui.ui.widgets.node_table.NodeTable`, whose module is
about patching rows.
"""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from rich.text import Text

from gputui.ui.render.operations import BUSY_MARK
from gputui.ui.widgets.cell_texts import CellTexts
from gputui.ui.widgets.line_table import LineTable

MARK = "●"
#: the row under the cursor
ARROW = "▶"


class MarkColumn(LineTable):
    """A table whose ``mark`` column shows :attr:`marks` and :attr:`busy`."""

    #: nodes the operator marked (the subclass owns them)
    marks: set[str]
    #: nodes running operations work on, handed down by the app
    busy: frozenset[str] = frozenset()
    #: the node whose row carries the ``▶`` (the cursor's)
    arrow: str | None = None
    _cell_texts: CellTexts

    def show_arrow(self, node: str | None) -> None:
        """Move the ``▶`` to ``node``'s row (the cursor's)."""
        if node != self.arrow:
            old, self.arrow = self.arrow, node
            for name in (old, node):
                if name is not None:
                    self._set_mark_cell(name)

    def show_busy(self, nodes: frozenset[str]) -> None:
        """The nodes running operations work on now: their mark cells follow."""
        changed, self.busy = self.busy ^ nodes, nodes
        for node in changed:
            self._set_mark_cell(node)

    def _mark_text(self, node: str) -> Text:
        if node in self.busy and node not in self.marks:
            mark, role = BUSY_MARK, "progress"
        else:
            mark, role = (MARK if node in self.marks else " "), "info"
        return _mark_cell(node == self.arrow, mark, self._cell_texts.style(role))

    def _set_mark_cell(self, node: str) -> None:
        if self.has_row(node):
            self.put_row(node, {"mark": self._mark_text(node)})


@lru_cache(maxsize=64)
def _mark_cell(arrow: bool, mark: str, style: Style | str) -> Text:
    """One shared text per look of the mark cell: a cleared filter brings back 15,000 rows
    at once, and making each its own two-part text cost 0.3 s (a table never mutates a
    cell, so sharing is safe, as for :class:`~gputui.ui.widgets.cell_texts.CellTexts`)."""
    text = Text(ARROW if arrow else " ", style="bold")
    text.append(mark, style=style)
    return text
