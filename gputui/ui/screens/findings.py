"""``FindingsScreen`` (``:findings``): everything wrong, most severe first; Enter goes there.

Rows are keyed by (code, node, subject), so a refresh patches them in place and the cursor
stays on the finding the operator was reading; the hint of the selected finding is shown
below the table because it is the "what do I do next" half of a finding.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import CellDoesNotExist

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, Finding
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import CommandRequested, JumpRequested
from gputui.ui.render.style import PLAIN, SEVERITY_SHORT, SEVERITY_SYMBOL, Palette
from gputui.ui.screens.base import GpuScreen
from gputui.ui.widgets.palette_mixin import widget_palette

COLUMNS = (("severity", "SEV"), ("code", "CODE"), ("node", "NODE"), ("message", "MESSAGE"))


def finding_key(finding: Finding) -> str:
    """A stable row key: the same problem keeps its row across refreshes."""
    return f"{finding.code}|{finding.node or '*'}|{finding.subject}"


def finding_cells(finding: Finding, palette: Palette = PLAIN) -> dict[str, Text]:
    """The row of one finding; severity as symbol AND word AND colour."""
    sev = finding.severity
    return {
        "severity": Text(f"{SEVERITY_SYMBOL[sev]} {SEVERITY_SHORT[sev]}",
                         style=palette.severity(sev)),
        "code": Text(finding.code),
        "node": Text(finding.node or "(cluster)"),
        "message": Text(finding.message, no_wrap=True),
    }


class FindingsTable(DataTable[Text]):
    """All findings, patched by key, in the snapshot's order (most severe first)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")
        self.findings: dict[str, Finding] = {}
        self._cells: dict[str, dict[str, Text]] = {}

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    @property
    def selected(self) -> Finding | None:
        """The finding under the cursor."""
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:
            return None
        return self.findings.get(str(key))

    def show_findings(self, findings: Iterable[Finding], palette: Palette = PLAIN) -> None:
        """Patch rows to ``findings`` (add new, update changed, remove gone), keep order."""
        current = self.selected
        wanted: dict[str, Finding] = {}
        for finding in findings:
            wanted.setdefault(finding_key(finding), finding)
        for key in set(self.findings) - set(wanted):
            self.remove_row(key)
            self._cells.pop(key, None)
        for key, finding in wanted.items():
            cells = finding_cells(finding, palette)
            if key not in self.findings:
                self.add_row(*cells.values(), key=key)
            else:
                for column, text in cells.items():
                    if self._cells[key][column] != text:
                        self.update_cell(key, column, text, update_width=True)
            self._cells[key] = cells
        self.findings = wanted
        self.sort("severity", "node", "code", key=_snapshot_order)
        if current is not None and finding_key(current) in wanted:
            self.move_cursor(row=self.get_row_index(finding_key(current)), scroll=False)


_RANK = {word: sev.rank for sev, word in SEVERITY_SHORT.items()}


def _snapshot_order(values: tuple[Text, Text, Text]) -> tuple[int, bool, str, str]:
    """The snapshot's finding order (most severe, cluster-wide, node, code) from the cells."""
    severity, node, code = (value.plain for value in values)
    return (-_RANK.get(severity.split()[-1], 0), node != "(cluster)", node, code)


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

    @on(DataTable.RowHighlighted, "#findings-table")
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

    def action_jump(self) -> None:
        finding = self.table.selected
        if finding is not None:
            self.post_message(JumpRequested(finding.node, finding.pane))

    def action_summary(self) -> None:
        """``s``: the handoff summary (the app builds it)."""
        self.post_message(CommandRequested("view_summary"))

    @on(DataTable.RowSelected, "#findings-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()
