"""``PipelinePane``: the selected node's operand chain, with a cursor over its stages.

The pane receives snapshots and a node name from the app (it never fetches); it keeps the
cursor on an operand *name*, so a refresh that changes statuses or adds a stage does not
move the operator's place. Opening a stage's log is an intent posted up
(:class:`~gputui.ui.contracts.PodLogRequested`); the app owns the source and the screen.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Region
from textual.reactive import reactive
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import PipelineStage
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import PodLogRequested
from gputui.ui.render.pipeline import render_pipeline, stage_names
from gputui.ui.widgets.name_cursor import NameCursorMixin
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from gputui.ui.widgets.palette_mixin import widget_palette

#: at this width and above the pod and age columns are shown
WIDE_COLUMNS = 120


class PipelinePane(NodeScopedMixin, NameCursorMixin, Vertical, can_focus=True):
    """The readiness chain of one node: driver → toolkit → validator → the rest.

    The head (node, driver and kernel, where the chain breaks) stays put; only the stage
    table scrolls, so in a short pane the break is still the first thing in sight.
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("pipeline")

    cursor: reactive[str | None] = reactive(None, init=False)

    def compose(self) -> ComposeResult:
        yield Static(id="pipeline-head")
        with VerticalScroll(id="pipeline-scroll", can_focus=False):
            yield Static(id="pipeline-body")

    # --- the contract -------------------------------------------------------------------

    def show_node(self, node_name: str | None) -> None:
        """Show ``node_name``; the cursor starts where the chain breaks (or at the top)."""
        if node_name != self._node_name:
            self._node_name = node_name
            node = self.node
            broken = node.pipeline.first_broken() if node else None
            names = stage_names(node)
            self.set_reactive(PipelinePane.cursor, broken.operand if broken else (
                names[0] if names else None))
        self._redraw_if_changed()

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the pipeline tab shows no metrics (the metrics tab does)."""

    # --- state ---------------------------------------------------------------------------

    @property
    def selected_stage(self) -> PipelineStage | None:
        """The stage under the cursor."""
        node = self.node
        return node.pipeline.stage(self.cursor) if node and self.cursor else None

    def watch_cursor(self) -> None:
        self._redraw()

    def _draw_key(self) -> tuple[Any, ...]:
        return (*super()._draw_key(), self.cursor)

    def _draw(self) -> None:
        node = self.node
        names = stage_names(node)
        if names and self.cursor not in names:
            self.set_reactive(PipelinePane.cursor, names[0])
        if not self.is_mounted:
            return
        wide = self.size.width >= WIDE_COLUMNS
        result = render_pipeline(node, self._now, self.cursor, wide=wide,
                                 palette=widget_palette(self), missing=self._node_name)
        self.query_one("#pipeline-head", Static).update(result.head)
        self.query_one("#pipeline-body", Static).update(result.body)
        if result.cursor_line is not None:
            scroll = self.query_one("#pipeline-scroll", VerticalScroll)
            self.call_after_refresh(scroll.scroll_to_region, Region(0, result.cursor_line, 1, 1),
                                    animate=False, immediate=True)

    def on_mount(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    # --- keys ----------------------------------------------------------------------------

    def cursor_names(self) -> tuple[str, ...]:
        return stage_names(self.node)

    def _request(self) -> None:
        stage = self.selected_stage
        if stage is None or not stage.pod:
            self.notify("This stage has no pod to open.", severity="warning")
            return
        self.post_message(PodLogRequested(stage.namespace or self._snapshot.operator_namespace
                                          or "", stage.pod, stage.container))

    def action_open_log(self) -> None:
        """Open the pod log screen for the stage under the cursor."""
        self._request()

    def action_open_events(self) -> None:
        """Open the same screen: it shows the pod's events beside its log."""
        self._request()
