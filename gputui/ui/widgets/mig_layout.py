"""``MigLayout``: one card per MIG-capable node, GPUs drawn as slices, with a node cursor.

Why a window of cards: a card is a widget, and Textual's cost of mounting one grows with the
widgets already there; at 5,000 GPU nodes (4,000 with MIG) ``:mig`` mounted 4,000 cards and
the app answered no key for 35 s. So at most :data:`WINDOW` cards exist, showing the nodes
around the cursor (in name order); moving the cursor past the window's edge moves the window
by as much, and a line under the cards says which part of how many is shown. Each card slot
is redrawn only when what it shows changed (its node, the node's view, the cursor, the
width, the age in minutes), so a live ``pending`` → ``success`` flip redraws one card and
the cursor and scroll position stay where the operator left them.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, NodeMigView
from gputui.domain.pane import Pane
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import JumpRequested, PodLogRequested
from gputui.ui.render.mig import node_card
from gputui.ui.widgets.name_cursor import NameCursorMixin
from gputui.ui.widgets.palette_mixin import widget_palette

#: at this width and above each compute slice is 6 cells wide (profile names fit)
WIDE_COLUMNS = 120
#: the most cards drawn at once (a card is at least four lines: more than a tall screen)
WINDOW = 40


def window_start(count: int, cursor: int, start: int, size: int = WINDOW) -> int:
    """The first of ``size`` cards shown out of ``count`` so that ``cursor`` is among them,
    moving the window from ``start`` as little as possible."""
    size = min(size, count)
    start = min(max(start, cursor - size + 1), cursor)
    return max(0, min(start, count - size))


class MigCard(Static):
    """One node's MIG card (a plain Static; the class carries the state for CSS)."""


class MigLayout(NameCursorMixin, VerticalScroll, can_focus=True):
    """MIG layouts of every MIG-capable node; up/down choose a node."""

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("mig")

    cursor: reactive[str | None] = reactive(None, init=False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._now = 0.0
        #: the card slots, top to bottom, and the first node of the window they show
        self._slots: list[MigCard] = []
        self._start = 0
        #: what each slot was drawn from: node, view, cursor on it, cell width, age in minutes
        self._drawn: dict[int, tuple[str, NodeMigView, bool, int, int | None]] = {}
        self._rest = Static(classes="mig-window")
        self._rest.display = False

    def on_mount(self) -> None:
        self.mount(self._rest)

    @property
    def names(self) -> tuple[str, ...]:
        """MIG nodes in display order (by name)."""
        return tuple(sorted(self._snapshot.mig.nodes))

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the cards to ``snapshot``."""
        self._snapshot = snapshot
        self._now = now
        names = self.names
        if names and self.cursor not in names:
            self.set_reactive(MigLayout.cursor, names[0])
        self._patch()

    def show_node(self, node_name: str | None) -> None:
        """Select ``node_name`` when it is a MIG node."""
        if node_name in self._snapshot.mig.nodes:
            self.cursor = node_name

    def _patch(self) -> None:
        if not self.is_mounted:
            return
        names = self.names
        at = names.index(self.cursor) if self.cursor in names else 0
        self._start = window_start(len(names), at, self._start)
        shown = names[self._start:self._start + WINDOW]
        while len(self._slots) < len(shown):
            self._slots.append(MigCard(classes="mig-card"))
            self.mount(self._slots[-1], before=self._rest)
        while len(self._slots) > len(shown):
            self._slots.pop().remove()
            self._drawn.pop(len(self._slots), None)
        cell = 6 if self.size.width >= WIDE_COLUMNS else 4
        palette = widget_palette(self)
        for slot, (card, name) in enumerate(zip(self._slots, shown, strict=True)):
            view = self._snapshot.mig.nodes[name]
            age = int(self._now - view.since) // 60 if view.since is not None else None
            key = (name, view, name == self.cursor, cell, age)
            if self._drawn.get(slot) != key:
                node = self._snapshot.nodes.get(name)
                card.update(node_card(view, self._now, product=node.product if node else "",
                                      cursor=name == self.cursor, cell=cell, palette=palette))
                card.set_class(name == self.cursor, "-cursor")
                card.set_class(view.state == "failed", "-failed")
                card.set_class(view.state == "pending", "-pending")
                self._drawn[slot] = key
        self._rest.display = len(shown) < len(names)
        if self._rest.display:
            self._rest.update(f"MIG nodes {self._start + 1:,}-{self._start + len(shown):,} of "
                              f"{len(names):,} shown (by name); up and down move through "
                              "the rest")

    def watch_cursor(self) -> None:
        self._patch()
        names = self.names
        slot = names.index(self.cursor) - self._start if self.cursor in names else -1
        if 0 <= slot < len(self._slots):
            self.call_after_refresh(self._slots[slot].scroll_visible, animate=False)

    def on_resize(self) -> None:
        self._patch()

    def cursor_names(self) -> tuple[str, ...]:
        return self.names

    def action_open_node(self) -> None:
        """Enter: jump to the node's pipeline (the mig-manager stage is there)."""
        if self.cursor:
            self.post_message(JumpRequested(self.cursor, Pane.PIPELINE))

    def action_open_log(self) -> None:
        """Open the node's mig-manager pod log: where a ``failed`` state is explained."""
        node = self._snapshot.nodes.get(self.cursor or "")
        stage = node.pipeline.stage("mig-manager") if node else None
        if stage is None or not stage.pod:
            self.notify("No mig-manager pod known on this node.", severity="warning")
            return
        self.post_message(PodLogRequested(stage.namespace or self._snapshot.operator_namespace
                                          or "", stage.pod, stage.container))
