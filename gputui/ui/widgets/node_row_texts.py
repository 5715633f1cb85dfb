"""``NodeRowTexts``: the styled cells of each node's row, kept while its inputs stay the same.

Why keep them: a filter that is cleared (or widened) brings thousands of rows back at once,
and making each row's eleven cells again (the words, the styles, the sort keys) was most of
the 1.2 s that ``esc`` on a filter cost at 5,000 nodes. The domain builder hands the same
``NodeView`` object for a node that did not change, so a row's cells are the same as long as
its view and the cluster finding queued on it are the same objects: then the kept cells are
handed back, and the table knows they were measured when first shown (columns only grow),
so it need not measure them again.

Kept for every node of the snapshot, shown or filtered out: the same cells the table holds
when nothing is filtered, so it costs no more than an unfiltered list.
"""

from __future__ import annotations

from collections.abc import Container, Mapping

from rich.text import Text

from gputui.domain.model import Finding, NodeView
from gputui.ui.node_rows import cell_sort_keys, node_cells
from gputui.ui.widgets.cell_texts import CellTexts


class NodeRowTexts:
    """Each node's row cells, by node name, with the inputs they were made from."""

    def __init__(self, cell_texts: CellTexts) -> None:
        self._cell_texts = cell_texts
        self._rows: dict[str, tuple[NodeView, Finding | None, dict[str, Text]]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def cells(self, view: NodeView, queued: Finding | None) -> tuple[dict[str, Text], bool]:
        """The snapshot's cells of ``view``'s row, each carrying its sort key (``queued``:
        a cluster finding naming the node), and whether they are the ones made before."""
        kept = self._rows.get(view.name)
        if kept is not None and kept[0] is view and kept[1] is queued:
            return kept[2], True
        keys, text = cell_sort_keys(view, queued), self._cell_texts.text
        cells = {key: text(cell, keys[key]) for key, cell in node_cells(view, queued).items()}
        self._rows[view.name] = (view, queued, cells)
        return cells, False

    def keep_only(self, nodes: Container[str]) -> None:
        """Forget the rows of nodes that left the cluster."""
        self._rows = {name: row for name, row in self._rows.items() if name in nodes}

    def clear(self) -> None:
        """Forget every row (the theme changed: the kept cells have the old colours)."""
        self._rows.clear()


__all__ = ["NodeRowTexts"]
