"""``FindingsTable``: every finding, one row each, most severe first, patched by key.

Rows are keyed by (code, node, subject), so a refresh patches them in place and the cursor
stays on the finding the operator was reading. The order is the snapshot's: most severe
first, cluster-wide findings before a node's, then node, then code; each of those cells
carries what it sorts by (:class:`~gputui.ui.widgets.sortable_text.SortableText`). A line
table (:mod:`gputui.ui.widgets.line_table`): a frame draws the findings on screen, not all
of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from gputui.domain.model import Finding
from gputui.ui.render.style import PLAIN, SEVERITY_SHORT, SEVERITY_SYMBOL, Palette
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.sortable_text import SortableText

COLUMNS = (("severity", "SEV"), ("code", "CODE"), ("node", "NODE"), ("message", "MESSAGE"))
#: the columns rows are ordered by, first decides (rows that tie keep the order they came in)
ORDER = ("severity", "node", "code")


def finding_key(finding: Finding) -> str:
    """A stable row key: the same problem keeps its row across refreshes."""
    return f"{finding.code}|{finding.node or '*'}|{finding.subject}"


def finding_cells(finding: Finding, palette: Palette = PLAIN) -> dict[str, Text]:
    """The row of one finding; severity as symbol AND word AND colour."""
    sev = finding.severity
    return {
        "severity": SortableText(f"{SEVERITY_SYMBOL[sev]} {SEVERITY_SHORT[sev]}", -sev.rank,
                                 style=palette.severity(sev)),
        "code": SortableText(finding.code, finding.code),
        # cluster-wide findings first, then by node name
        "node": SortableText(finding.node or "(cluster)",
                             (finding.node is not None, finding.node or "(cluster)")),
        "message": Text(finding.message, no_wrap=True),
    }


class FindingsTable(LineTable):
    """All findings, patched by key, in the snapshot's order (most severe first)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: dict[str, Finding] = {}
        self.sort_columns = ORDER

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(key, label)

    @property
    def selected(self) -> Finding | None:
        """The finding under the cursor."""
        key = self.current_key
        return self.findings.get(key) if key is not None else None

    def show_findings(self, findings: Iterable[Finding], palette: Palette = PLAIN) -> None:
        """Patch rows to ``findings`` (add new, update changed, remove gone), keep order."""
        current = self.current_key
        wanted: dict[str, Finding] = {}
        for finding in findings:
            wanted.setdefault(finding_key(finding), finding)
        self.show_rows({key: finding_cells(finding, palette)
                        for key, finding in wanted.items()})
        self.findings = wanted
        self.move_to_key(current)  # the finding it was on, if that is still there
