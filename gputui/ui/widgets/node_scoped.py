"""``NodeScopedMixin``: the state every one-node pane keeps, and when it must redraw.

The pipeline, describe and metrics panes each show one node of the latest snapshot. A
redraw re-lays out the screen, which at 5,000 nodes and several snapshots a second is the
main cost of a key press (see :mod:`gputui.ui.contracts`). The domain builder hands back the
*same* :class:`~gputui.domain.model.NodeView` object for a node that did not change, so an
identity check says whether the pane's text could differ; ages move with ``now``, so a pane
also redraws when the clock enters a new :attr:`AGE_STEP` bucket.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, NodeView


class NodeScopedMixin:
    """Mix into a widget that shows one node; implement :meth:`_draw` (and maybe
    :meth:`_draw_key`). ``show_snapshot``/``show_node`` are the contract's two calls."""

    #: seconds between redraws caused only by the clock (ages shown to the minute or so)
    AGE_STEP = 5.0

    if TYPE_CHECKING:  # the Widget this is mixed into provides it
        @property
        def is_mounted(self) -> bool: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0
        self._node_name: str | None = None
        self._drawn_key: tuple[Any, ...] | None = None

    @property
    def node(self) -> NodeView | None:
        """The shown node in the latest snapshot; None when absent or none is selected."""
        return self._snapshot.nodes.get(self._node_name) if self._node_name else None

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Take a new snapshot; redraw only if this node's view or the age bucket changed."""
        self._snapshot = snapshot
        self._now = now
        self._redraw_if_changed()

    def show_node(self, node_name: str | None) -> None:
        """Show ``node_name``."""
        self._node_name = node_name
        self._redraw_if_changed()

    def _draw_key(self) -> tuple[Any, ...]:
        """What the drawing depends on; subclasses add their own inputs."""
        return (self._node_name, self.node, int(self._now // self.AGE_STEP))

    def _redraw_if_changed(self) -> None:
        if not self.is_mounted:
            return  # on_mount draws whatever is current then
        key = self._draw_key()
        if self._drawn_key is not None and len(key) == len(self._drawn_key) and all(
                a is b or a == b for a, b in zip(key, self._drawn_key)):
            return
        self._drawn_key = key
        self._draw()

    def _redraw(self) -> None:
        """Redraw unconditionally (mount, resize, cursor moves); call it from ``on_mount``."""
        self._drawn_key = self._draw_key()
        self._draw()

    def _draw(self) -> None:
        raise NotImplementedError
