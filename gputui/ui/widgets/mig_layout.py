"""``MigLayout``: one card per MIG-capable node, GPUs drawn as slices, with a node cursor.

Cards are patched by node name (update the ones that changed, mount new ones in order,
remove gone ones), so a live ``pending`` → ``success`` flip redraws one card and the cursor
and scroll position stay where the operator left them.
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
        self._cards: dict[str, MigCard] = {}
        #: what each card was drawn from: view, cursor on it, cell width, age in minutes
        self._drawn: dict[str, tuple[NodeMigView, bool, int, int | None]] = {}

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
        views = self._snapshot.mig.nodes
        for name in [n for n in self._cards if n not in views]:
            self._cards.pop(name).remove()
            self._drawn.pop(name, None)
        cell = 6 if self.size.width >= WIDE_COLUMNS else 4
        palette = widget_palette(self)
        previous: MigCard | None = None
        for name in self.names:
            view = views[name]
            age = int(self._now - view.since) // 60 if view.since is not None else None
            key = (view, name == self.cursor, cell, age)
            card = self._cards.get(name)
            if card is None:
                card = MigCard(classes="mig-card")
                self._cards[name] = card
                if previous is None:
                    self.mount(card, before=0 if self.children else None)
                else:
                    self.mount(card, after=previous)
            if self._drawn.get(name) != key:
                node = self._snapshot.nodes.get(name)
                card.update(node_card(view, self._now, product=node.product if node else "",
                                      cursor=name == self.cursor, cell=cell, palette=palette))
                card.set_class(name == self.cursor, "-cursor")
                card.set_class(view.state == "failed", "-failed")
                card.set_class(view.state == "pending", "-pending")
                self._drawn[name] = key
            previous = card

    def watch_cursor(self) -> None:
        self._patch()
        card = self._cards.get(self.cursor or "")
        if card is not None:
            self.call_after_refresh(card.scroll_visible, animate=False)

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
