"""``FindingsScreen`` (``:findings``): everything wrong, most severe first; Enter goes there.

The table (:class:`~gputui.ui.widgets.findings_table.FindingsTable`) patches its rows by
key, so the cursor stays on the finding the operator was reading; the hint of the selected
finding is shown below the table because it is the "what do I do next" half of a finding.
It wraps and scrolls (``shift+down``/``shift+up``, or ``tab`` into it): at 80x24 a hint that
names a pod, its budget and what to do runs past the five lines it once was cut to.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import CommandRequested, JumpRequested
from gputui.ui.render.style import SEVERITY_SHORT, SEVERITY_SYMBOL
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection
from gputui.ui.widgets.findings_table import FindingsTable
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.palette_mixin import widget_palette


class FindingsScreen(GpuScreen):
    """Findings, most severe first; Enter jumps to the node and pane concerned."""

    VIEW = "findings"
    DEFAULT_CLASSES = "findings-screen"
    BINDINGS = bindings_for("findings")

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT

    def compose_body(self) -> Iterable[Widget]:
        yield Static(id="findings-summary")
        yield FindingsTable(id="findings-table")
        with VerticalScroll(id="findings-detail"):
            yield Static(id="findings-hint")

    def on_mount(self) -> None:
        self.table.focus()

    @property
    def table(self) -> FindingsTable:
        """The findings table."""
        return self.query_one("#findings-table", FindingsTable)

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Patch the findings and the summary line."""
        self.snapshot = snapshot
        self.table.show_findings(snapshot.findings, widget_palette(self))
        counts = {sev: 0 for sev in SEVERITY_SHORT}
        for finding in snapshot.findings:
            counts[finding.severity] += 1
        summary = "  ".join(f"{SEVERITY_SYMBOL[s]} {n} {SEVERITY_SHORT[s]}"
                            for s, n in counts.items())
        self.query_one("#findings-summary", Static).update(
            f"{len(snapshot.findings)} findings  {summary}   enter: go to node and pane")
        self._show_hint()

    def show_node(self, node_name: str | None) -> None:
        """Nothing: the findings list shows every node (enter jumps to one)."""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: findings come from the snapshot, not the metrics feed."""

    def selected_nodes(self) -> Selection:
        """The node of the finding under the cursor (none for a cluster-wide finding)."""
        finding = self.table.selected if self.is_mounted else None
        if finding is None:
            return Selection(why_none="no finding is selected")
        return Selection.of((finding.node,), f"the selected finding ({finding.code}) is "
                            "about the cluster, not a node")

    @on(LineTable.CursorMoved, "#findings-table")
    def _show_hint(self) -> None:
        finding = self.table.selected
        hint = self.query_one("#findings-hint", Static)
        if finding is None:
            gaps = [gap.resource for gap in self.snapshot.gaps if gap.required]
            hint.update(f"No findings in what could be read; {', '.join(gaps)} cannot be read, "
                        "so health is unknown (see the header)." if gaps
                        else "No findings: nothing needs you right now.")
            return
        hint.update(Text.assemble((finding.message, "bold"), "\n", ("hint: ", "bold"),
                                  finding.hint or "-"))

    def action_detail_down(self) -> None:
        """Scroll the selected finding's message and hint down a line."""
        self.query_one("#findings-detail", VerticalScroll).scroll_down(animate=False)

    def action_detail_up(self) -> None:
        """Scroll the selected finding's message and hint up a line."""
        self.query_one("#findings-detail", VerticalScroll).scroll_up(animate=False)

    def action_jump(self) -> None:
        finding = self.table.selected
        if finding is not None:
            self.post_message(JumpRequested(finding.node, finding.pane))

    def action_summary(self) -> None:
        """``s``: the handoff summary (the app builds it)."""
        self.post_message(CommandRequested("view_summary"))

    @on(LineTable.RowChosen, "#findings-table")
    def _row_chosen(self, event: LineTable.RowChosen) -> None:
        """A click on the cursor's row goes there, as ``enter`` does."""
        event.stop()
        self.action_jump()
