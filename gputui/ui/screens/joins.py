"""``JoinsScreen`` (``:joins``): time to GPU per pool, then the nodes of the selected pool.

Top: one row per pool with its count, p50, p90 and max over the window's timed joins, its
slowest stage and what is happening now (nodes joining, nodes slow). Below: the selected
pool's nodes, each with its time to GPU and the share of each stage, or its current stage
and how long it has been at it, or why its join cannot be timed. ``enter`` on a pool moves
to its nodes; ``enter`` on a node opens its pipeline; ``esc`` goes back up.

Both tables are line tables (:class:`JoinsTable`) keyed by pool name and node name and
patched in place, so the cursor stays on the row the operator was reading as snapshots
arrive; a frame draws the rows on screen, not a pool's thousands of nodes. A click on the
cursor's row opens it, as ``enter`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, PoolJoins
from gputui.domain.pane import Pane
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import JumpRequested
from gputui.ui.render.joins import NODE_COLUMNS, POOL_COLUMNS, node_cells, pool_cells, pool_summary
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.palette_mixin import widget_palette
from gputui.ui.widgets.sortable_text import SortableText


class JoinsTable(LineTable):
    """A line table of rows keyed by name, patched to the rows wanted, in the order given."""

    def __init__(self, columns: tuple[tuple[str, str], ...], *, id: str | None = None,
                 arrow: bool = False) -> None:
        """``arrow``: while the table has the keys, the cursor's row carries a ``▶`` in its
        first cell (node rows: a highlight is only a colour to a screen reader or
        ``capture-pane``; with the keys on the pools, no node is selected)."""
        super().__init__(id=id)
        self._columns = columns
        self.sort_columns = (columns[0][0],)  # its cells carry their place in the order
        self._arrow_rows = arrow
        self._arrow: str | None = None
        self._firsts: dict[str, Text] = {}
        self._places: dict[str, int] = {}
        self._patching = False  # in show_rows: the ▶ is put right once, at its end

    def on_mount(self) -> None:
        for key, label in self._columns:
            self.add_column(key, label)

    @property
    def selected(self) -> str | None:
        """The key of the row under the cursor."""
        return self.current_key

    def show_rows(self, rows: Mapping[str, Mapping[str, Text]]) -> None:
        """Patch to ``rows`` (in their order), keeping the cursor on its row."""
        current, first = self.current_key, self._columns[0][0]
        self._firsts = {key: cells[first] for key, cells in rows.items()}
        self._places = {key: index for index, key in enumerate(rows)}
        self._patching = True
        try:
            super().show_rows({key: {**cells, first: self._first(key)}
                               for key, cells in rows.items()})
        finally:
            self._patching = False
        self.move_to_key(current)
        self._point(self.current_key if self.has_focus else None)

    def _first(self, key: str) -> SortableText:
        """The first cell of row ``key``: ``▶`` on the cursor's row when arrows are on."""
        cell = self._firsts[key]
        if self._arrow_rows:
            cell = Text.assemble("▶ " if key == self._arrow else "  ", cell)
        return _placed(cell, self._places[key])

    def _point(self, key: str | None) -> None:
        """Move the ``▶`` to row ``key``."""
        if not self._arrow_rows or key == self._arrow:
            return
        old, self._arrow = self._arrow, key
        first = self._columns[0][0]
        for name in {old, key}:
            if name is not None and name in self._firsts and name in self.rows:
                self.write_cells(name, {first: self._first(name)})

    def cursor_moved(self) -> None:
        """The cursor moved: the ``▶`` follows, and the screen is told."""
        if not self._patching:  # a cell written mid-patch would be patched back
            self._point(self.current_key if self.has_focus else None)
        super().cursor_moved()

    def on_focus(self) -> None:
        self._point(self.current_key)

    def on_blur(self) -> None:
        self._point(None)


def _placed(cell: Text, index: int) -> SortableText:
    """``cell`` as shown, carrying its place in the order the rows were given."""
    placed = SortableText("", index, style=cell.style, no_wrap=cell.no_wrap, end=cell.end)
    placed.append_text(cell)
    return placed


class JoinsScreen(GpuScreen):
    """Pools with their time to GPU; enter shows a pool's nodes, enter again a node's pipeline."""

    VIEW = "joins"
    DEFAULT_CLASSES = "joins-screen"
    BINDINGS = bindings_for("joins")

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0

    def compose_body(self) -> Iterable[Widget]:
        yield JoinsTable(POOL_COLUMNS, id="joins-pools")
        yield Static(id="joins-summary")
        yield JoinsTable(NODE_COLUMNS, id="joins-nodes", arrow=True)

    def on_mount(self) -> None:
        self.pools.focus()

    @property
    def pools(self) -> JoinsTable:
        """The pools table."""
        return self.query_one("#joins-pools", JoinsTable)

    @property
    def nodes(self) -> JoinsTable:
        """The selected pool's nodes."""
        return self.query_one("#joins-nodes", JoinsTable)

    def selected_pool(self) -> PoolJoins | None:
        """The pool under the pools table's cursor (the first one before any move)."""
        key = self.pools.selected
        pools = self.snapshot.joins
        return next((p for p in pools if _pool_key(p) == key), pools[0] if pools else None)

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the pools, the summary and the selected pool's nodes."""
        self.snapshot, self._now = snapshot, now
        palette = widget_palette(self)
        self.pools.show_rows({_pool_key(p): pool_cells(p, now, palette) for p in snapshot.joins})
        self._show_pool()

    @on(LineTable.CursorMoved, "#joins-pools")
    def _show_pool(self) -> None:
        pool = self.selected_pool()
        self.query_one("#joins-summary", Static).update(pool_summary(pool))
        palette = widget_palette(self)
        rows: dict[str, dict[str, Text]] = {}
        for name in _node_order(pool, self.snapshot) if pool is not None else ():
            view = self.snapshot.nodes.get(name)
            join = view.join if view is not None else None
            rows[name] = node_cells(name, join, self._now, pool.limit if pool else None,
                                    palette)
        self.nodes.show_rows(rows)

    def show_node(self, node_name: str | None) -> None:
        """Select the pool of ``node_name`` and the node in it (a jump from elsewhere)."""
        for pool in self.snapshot.joins:
            if node_name in pool.nodes:
                self.pools.move_cursor(row=self.pools.get_row_index(_pool_key(pool)))
                self._show_pool()
                self.nodes.move_cursor(row=self.nodes.get_row_index(node_name))
                self.nodes.focus()
                return

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: time to GPU comes from the cluster's records, not metrics."""

    def selected_nodes(self) -> Selection:
        """The node under the cursor of the pool's node list, once that list has the keys
        (``enter`` on a pool); on the pools table a pool is selected, not a node."""
        if not self.is_mounted or not self.nodes.has_focus:
            return Selection(why_none="a pool is selected, not a node (enter shows its "
                                      "nodes)")
        return Selection.of((self.nodes.selected,), "the pool has no nodes")

    def go_back(self) -> bool:
        """``esc`` in the nodes goes back up to the pools."""
        if self.nodes.has_focus:
            self.pools.focus()
            return True
        return False

    def action_open_pool(self) -> None:
        """``enter`` on a pool: its nodes; on a node (the nodes have the keys): its
        pipeline, as ``p``."""
        if self.nodes.has_focus:
            self.action_open_node()
        else:
            self._enter_nodes()

    def _enter_nodes(self) -> None:
        """The pool's nodes take the keys (when it has any)."""
        if self.nodes.row_count:
            self.nodes.focus()

    def action_open_node(self) -> None:
        """``enter`` on a node: its operand pipeline, where the stage it waits on is."""
        node = self.nodes.selected
        if node is not None:
            self.post_message(JumpRequested(node, Pane.PIPELINE))

    @on(LineTable.RowChosen)
    def _row_chosen(self, event: LineTable.RowChosen) -> None:
        """A click on the cursor's row opens it, as ``enter`` there does."""
        event.stop()
        if event.table.id == "joins-pools":
            self._enter_nodes()
        else:
            self.action_open_node()


def _pool_key(pool: PoolJoins) -> str:
    return pool.pool or "(no pool)"


def _node_order(pool: PoolJoins, snapshot: ClusterSnapshot) -> list[str]:
    """Joining nodes first (longest at it first), then by time to GPU, slowest first, then
    the untimed ones by name: the operator's eye lands on what is late."""
    def key(name: str) -> tuple[int, float, str]:
        view = snapshot.nodes.get(name)
        join = view.join if view is not None else None
        if join is not None and join.state == "joining" and join.joined is not None:
            return (0, join.joined, name)
        if join is not None and join.total is not None:
            return (1, -join.total, name)
        return (2, 0.0, name)
    return sorted(pool.nodes, key=key)
