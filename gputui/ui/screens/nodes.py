"""``NodesScreen``: the node list with the selected node's detail tabs below (or beside) it.

The screen is glue: it forwards snapshots to the table and the detail widgets, drives the
detail widgets' node from the table cursor (debounced, so holding an arrow key over 5,000
rows does not re-render the detail pane 5,000 times), and hosts the ``/`` filter prompt.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import on
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static, TabbedContent, TabPane

from gputui.domain.metrics import EMPTY_METRICS, MetricsReading, MetricsWant
from gputui.domain.model import (
    EMPTY_SNAPSHOT,
    ClusterPolicyView,
    ClusterSnapshot,
    NodeView,
    StageStatus,
)
from gputui.domain.pane import Pane
from gputui.ui.commands import bindings_for, key_label
from gputui.ui.contracts import (
    ContractError,
    DetailPane,
    JumpRequested,
    MetricsWanted,
    PodLogRequested,
    check_contract,
)
from gputui.ui.loop_turn import LatestOnly
from gputui.ui.node_rows import COLUMNS, NodeFilter
from gputui.ui.render.focus import detail_title
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.metrics_pane import MetricsPane
from gputui.ui.widgets.node_detail import NodeDetail
from gputui.ui.widgets.node_table import NodeTable
from gputui.ui.widgets.pipeline import PipelinePane

DetailTab = tuple[str, type[Widget], str]


def detail_tabs(*tabs: DetailTab) -> tuple[DetailTab, ...]:
    """Register detail tabs: each pane is checked against :class:`DetailPane` here, so a
    misspelt method fails the import instead of leaving a tab the screen never feeds."""
    for _, pane, _ in tabs:
        check_contract(pane, DetailPane)
    return tabs


#: tab id -> (widget class, tab title) of the selected node's detail panes
DETAIL_TABS = detail_tabs(
    ("pipeline", PipelinePane, "Pipeline"),
    ("node", NodeDetail, "Describe"),
    ("metrics", MetricsPane, "Metrics"),
)
#: seconds (of the app clock) after which the detail is redrawn even if its node is unchanged
DETAIL_AGE_REFRESH = 5.0
#: seconds the cursor must rest on a node before the detail panes follow it
SELECT_DEBOUNCE = 0.08


class NodesScreen(GpuScreen):
    """The main view: GPU nodes, then the selected node's pipeline / describe / metrics."""

    VIEW = "nodes"
    DEFAULT_CLASSES = "nodes-screen"
    BINDINGS = bindings_for("nodes")

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self.now = 0.0
        self.selected: str | None = None
        self._pending: str | None = None
        self._view_line = ""
        self._select_timer: Timer | None = None
        self._detail_fed: tuple[NodeView | None, float] = (None, 0.0)
        self._detail_policy: ClusterPolicyView | None = None
        self._detail_snapshot: ClusterSnapshot | None = None
        self.metrics: MetricsReading = EMPTY_METRICS
        self._want: MetricsWant | None = None
        self._timeline_key = ""
        self._typed_filter = LatestOnly(self, lambda text: self.table.set_filter(
            NodeFilter(text, self.table.node_filter.findings_only)))

    def compose_body(self) -> Iterable[Widget]:
        # the grammar of gputui.ui.node_rows (NodeFilter): free text and selector terms
        yield Input(placeholder="filter: text  k=v  k!=v  k in (a,b)  k notin (a,b)  !k  "
                                "(esc clears)",
                    id="node-filter", classes="hidden")
        yield Static(id="node-view-line")
        yield NodeTable(id="node-table")
        with TabbedContent(id="node-detail-tabs", initial="pipeline"):
            for tab, widget_class, title in DETAIL_TABS:
                with TabPane(title, id=tab):
                    yield widget_class(id=f"detail-{tab}")

    def selected_nodes(self) -> Selection:
        """The marked nodes when any are marked, else the node under the cursor (the one
        the detail pane shows: a selection still resting is taken at once)."""
        if not self.is_mounted:
            return Selection(why_none="the node list is not shown yet")
        table = self.table
        if table.marks:
            return Selection(tuple(sorted(table.marks)))
        self._flush_pending()
        return Selection.of((table.selected_node,), "no node is shown (check the filter)"
                            if self.snapshot.nodes else "no node is shown")

    def on_mount(self) -> None:
        self.table.focus()
        self._update_view_line()

    @property
    def table(self) -> NodeTable:
        """The node list."""
        return self.query_one("#node-table", NodeTable)

    def detail_widgets(self) -> list[DetailPane]:
        """The detail widget of the visible tab (hidden tabs catch up when shown).

        Only the visible one is fed: each redraw re-lays out the screen, and at 5,000
        nodes and several snapshots a second three redraws per snapshot cost key presses.
        """
        active = self.query_one("#node-detail-tabs", TabbedContent).active or "pipeline"
        panes: list[DetailPane] = []
        for widget in self.query(f"#detail-{active}"):
            if not isinstance(widget, DetailPane):  # only DETAIL_TABS widgets carry the id
                raise ContractError(f"{type(widget).__qualname__} is not a DetailPane")
            panes.append(widget)
        return panes

    @on(TabbedContent.TabActivated, "#node-detail-tabs")
    def _tab_shown(self) -> None:
        """A tab became visible: bring its widget to the current node and snapshot."""
        for widget in self.detail_widgets():
            widget.show_node(self.selected)
        self._feed_detail(force=True)
        self._feed_metrics()
        self._ask_metrics()
        self._show_focus()

    def on_descendant_focus(self) -> None:
        self._show_focus()

    on_descendant_blur = on_descendant_focus

    def _show_focus(self) -> None:
        """The detail pane's top border: its node, and whether it has the keys."""
        tabs = self.query_one("#node-detail-tabs", TabbedContent)
        title = next((t for tab, _, t in DETAIL_TABS if tab == tabs.active), "Detail")
        inside = tabs.has_focus_within
        tabs.border_title = detail_title(title, self.selected, len(self.table.marks), inside)
        tabs.set_class(inside, "-focused")

    # ------------------------------------------------------------------ metrics
    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """A metrics reading: the utilisation column, the metrics tab when shown."""
        self.metrics, self.now = reading, max(self.now, now)
        self.table.show_util(reading.node_util, reading.unread)
        self._feed_metrics()
        self._ask_metrics()  # rows scrolled since the last reading are read next time

    def _feed_metrics(self) -> None:
        for widget in self.detail_widgets():
            widget.show_metrics(self.metrics, self.now)

    def _ask_metrics(self) -> None:
        """Tell the app what is on screen (the feed reads only that); only on change."""
        tabs = self.query_one("#node-detail-tabs", TabbedContent)
        selected = self.selected if tabs.active == "metrics" else None
        visible = tuple(self.table.rows_on_screen())
        exporters: dict[str, tuple[str, str]] = {}
        for name in (*visible, selected or ""):
            view = self.snapshot.nodes.get(name)
            stage = view.pipeline.stage("dcgm-exporter") if view is not None else None
            if stage is not None and stage.pod and stage.status is StageStatus.READY:
                exporters[name] = (stage.namespace or self.snapshot.operator_namespace or "",
                                   stage.pod)
        want = MetricsWant(selected, visible, exporters)
        if want != self._want:
            self._want = want
            self.post_message(MetricsWanted(want))

    # ------------------------------------------------------------------ the contract
    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the table, then hand the snapshot to the detail widgets."""
        self.snapshot, self.now = snapshot, now
        self.table.show_snapshot(snapshot, now)
        self._feed_detail()
        self._update_view_line()

    def _feed_detail(self, force: bool = False) -> None:
        """Hand the snapshot to the visible detail widget when its node changed.

        Also when :data:`DETAIL_AGE_REFRESH` seconds passed (so "for 12 min" keeps moving):
        5,000 nodes change often, the one on screen rarely, and a redraw costs a relayout.
        """
        view = self.snapshot.nodes.get(self.selected or "")
        last_view, last_time = self._detail_fed
        if not force and view is last_view and self.now - last_time < DETAIL_AGE_REFRESH \
                and self.snapshot.cluster_policy is self._detail_policy:
            return
        self._detail_fed = (view, self.now)
        self._detail_policy = self.snapshot.cluster_policy
        self._detail_snapshot = self.snapshot
        for widget in self.detail_widgets():
            widget.show_snapshot(self.snapshot, self.now)

    def show_node(self, node_name: str | None) -> None:
        """Put the cursor on ``node_name`` (clearing a filter that hides it)."""
        if node_name is None:
            return
        table = self.table
        if not table.select_node(node_name) and node_name in self.snapshot.nodes:
            self.table.set_filter(NodeFilter())
            table.select_node(node_name)
        self._select(node_name)

    def show_tab(self, tab: str, focus: bool = False) -> None:
        """Show detail tab ``tab`` (``pipeline``, ``node``, ``metrics``)."""
        tabs = self.query_one("#node-detail-tabs", TabbedContent)
        tabs.active = tab
        if focus:
            for widget in self.query(f"#detail-{tab}"):
                if widget.focusable:
                    widget.focus()

    # ------------------------------------------------------------------ selection
    @on(NodeTable.NodeSelected)
    def _node_selected(self, event: NodeTable.NodeSelected) -> None:
        self._pending = event.node
        if self._select_timer is not None:
            self._select_timer.stop()  # a held arrow key re-renders the detail once, at rest
        self._select_timer = self.set_timer(SELECT_DEBOUNCE, self._flush_selection,
                                            name="select-node")

    def _flush_selection(self) -> None:
        self._select_timer = None
        if self._pending != self.selected:
            self._select(self._pending)

    def _flush_pending(self) -> None:
        """The detail panes take the cursor's node now, not after the debounce: what an
        action acts on is what the detail shows."""
        if self._select_timer is not None:
            self._select_timer.stop()
            self._select_timer = None
        node = self.table.selected_node
        if node != self.selected:
            self._select(node)

    def _select(self, node: str | None) -> None:
        self.selected = self._pending = node
        widgets = self.detail_widgets()
        if self._detail_snapshot is not self.snapshot:  # skipped feeds: catch up first
            self._feed_detail(force=True)
        for widget in widgets:
            widget.show_node(node)
        self._detail_fed = (self.snapshot.nodes.get(node or ""), self.now)
        self._update_view_line()
        self._ask_metrics()
        self._show_focus()

    @on(NodeTable.RowChosen, "#node-table")
    def _row_chosen(self, event: NodeTable.RowChosen) -> None:
        event.stop()
        self.action_open_detail()

    @on(NodeTable.ViewChanged)
    def _view_changed(self) -> None:
        self._update_view_line()
        self._show_focus()

    def _update_view_line(self) -> None:
        table = self.table
        node_filter = table.node_filter
        # mid-fill, "48/5000" would read as a filter hiding most nodes
        parts = [f"{len(self.snapshot.nodes)} nodes, adding rows…" if table.filling
                 else f"{table.row_count}/{len(self.snapshot.nodes)} nodes"]
        if node_filter.text:
            parts.append(f"filter: {node_filter.text}")
        if node_filter.findings_only:
            parts.append("faults only")
        if table.marks:
            parts.append(f"{len(table.marks)} marked")
        label = next(c.label for c in COLUMNS if c.key == table.sort_column)
        parts.append(f"sort: {label} {'▼' if table.sort_reverse else '▲'}")
        if table.dropped:  # the terminal is too narrow for them: say so, or they are lost
            parts.append(f"{len(table.dropped)} columns hidden")
        # the footer has no room left for it at 80 columns (it would push out "? Help")
        if not self._timeline_key and self.is_current:
            # the node's timeline key after the user's remaps (Textual applied them)
            self._timeline_key = next((key_label(key) for key, active in
                                       self.active_bindings.items()
                                       if active.binding.action == "node_timeline"), "")
        if self._timeline_key:
            parts.append(f"{self._timeline_key}: history")
        line = " │ ".join(parts)
        if line != self._view_line:  # an update re-lays out the screen: only on change
            self._view_line = line
            self.query_one("#node-view-line", Static).update(line)

    # ------------------------------------------------------------------ filter prompt
    @on(Input.Changed, "#node-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self._typed_filter.offer(event.value)

    @on(Input.Submitted, "#node-filter")
    def _filter_submitted(self) -> None:
        self._typed_filter.flush()
        self.query_one("#node-filter", Input).add_class("hidden")
        self.table.focus()

    def close_filter(self, clear: bool) -> bool:
        """Hide the prompt (and clear the filter text when ``clear``); False if nothing to do."""
        prompt = self.query_one("#node-filter", Input)
        was_open = not prompt.has_class("hidden")
        prompt.add_class("hidden")
        self.table.focus()
        if clear:
            self._typed_filter.drop()  # a filter typed but not yet applied goes too
        if clear and (self.table.node_filter.text or prompt.value):
            prompt.value = ""
            self.table.set_filter(NodeFilter("", self.table.node_filter.findings_only))
            return True
        return was_open

    # ------------------------------------------------------------------ actions (registry)
    def action_filter(self) -> None:
        prompt = self.query_one("#node-filter", Input)
        prompt.remove_class("hidden")
        prompt.focus()

    def go_back(self) -> bool:
        """``esc``: close or clear the filter, then faults-only, then the marks."""
        if self.close_filter(clear=True):
            return True
        if self.table.node_filter.findings_only:
            self.action_findings_only()
            return True
        if self.table.marks:
            self.table.clear_marks()
            return True
        return False

    def apply_filter(self, text: str) -> None:
        """Show only the nodes ``text`` matches (``:nodes h100``), faults-only off."""
        self.table.set_filter(NodeFilter(text))

    def action_findings_only(self) -> None:
        current = self.table.node_filter
        self.table.set_filter(NodeFilter(current.text, not current.findings_only))

    def action_mark(self) -> None:
        self.table.toggle_mark()

    def action_clear_marks(self) -> None:
        self.table.clear_marks()

    def action_sort_next(self) -> None:
        self.table.sort_next()

    def action_sort_reverse(self) -> None:
        self.table.sort_by(self.table.sort_column, reverse=not self.table.sort_reverse)

    def action_open_detail(self) -> None:
        self._select(self.table.selected_node)
        tabs = self.query_one("#node-detail-tabs", TabbedContent)
        self.show_tab(tabs.active or "pipeline", focus=True)

    def action_show_tab(self, tab: str) -> None:
        self.show_tab(tab)

    def action_open_log(self) -> None:
        if (node := self.snapshot.nodes.get(self.table.selected_node or "")) is None:
            return
        stage = node.pipeline.first_broken() or node.pipeline.stage("driver")
        if stage is None or not (stage.pod and stage.namespace):
            self.notify(f"{node.name}: no operand pod to read", severity="warning")
            return
        self.post_message(PodLogRequested(stage.namespace, stage.pod, stage.container))

    def action_node_timeline(self) -> None:
        """``h``: the selected node's timeline (``:timeline`` filtered to it)."""
        node = self.table.selected_node
        if node is not None:
            self.post_message(JumpRequested(node, Pane.TIMELINE))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Node keys need a node under the cursor (greyed out in the footer otherwise)."""
        if action in ("mark", "open_detail", "open_log", "node_timeline"):
            return self.table.selected_node is not None or None
        return True
