"""``MarkColumn``: the node list's first column, which says two things in one cell.

``●``: the node is marked (``space``), so the next action targets it; ``⟳``: a running
operation (``:ops``) works on it. A mark wins, because it says what the next key press
does. Kept apart from :class:`~gputui.ui.widgets.node_table.NodeTable`, whose module is
about patching rows.
"""

from __future__ import annotations

from rich.text import Text

from gputui.ui.render.operations import BUSY_MARK
from gputui.ui.widgets.cell_texts import CellTexts
from gputui.ui.widgets.stable_table import StableTable

MARK = "●"


class MarkColumn(StableTable):
    """A table whose ``mark`` column shows :attr:`marks` and :attr:`busy`."""

    #: nodes the operator marked (the subclass owns them)
    marks: set[str]
    #: nodes running operations work on, handed down by the app
    busy: frozenset[str] = frozenset()
    _cell_texts: CellTexts

    def show_busy(self, nodes: frozenset[str]) -> None:
        """The nodes running operations work on now: their mark cells follow."""
        changed, self.busy = self.busy ^ nodes, nodes
        for node in changed:
            self._set_mark_cell(node)

    def _mark_text(self, node: str) -> Text:
        if node in self.busy and node not in self.marks:
            return Text(BUSY_MARK, style=self._cell_texts.style("progress"))
        return Text(MARK if node in self.marks else " ", style=self._cell_texts.style("info"))

    def _set_mark_cell(self, node: str) -> None:
        if node in self.rows:
            self.update_cell(node, "mark", self._mark_text(node))
