"""``NodeRowTexts``: a row's cells are made once per view and queued finding (unit)."""

from __future__ import annotations

from dataclasses import replace

from gputui.domain.model import Finding, NodeView, Severity
from gputui.ui.widgets.cell_texts import CellTexts
from gputui.ui.widgets.node_row_texts import NodeRowTexts


def _queued(node: str) -> Finding:
    return Finding(code="upgrade-queue-stalled", severity=Severity.CRITICAL, node=None,
                   message="the upgrade queue is stalled", hint="", nodes=(node,))


def test_cells_are_kept_while_view_and_queued_finding_are_the_same_objects() -> None:
    rows = NodeRowTexts(CellTexts())
    view = NodeView(name="n1", product="NVIDIA-A100", gpu_count=8, ready=True)
    cells, kept = rows.cells(view, None)
    assert not kept and cells["name"].plain == "n1"
    again, kept = rows.cells(view, None)
    assert kept and again is cells
    cordoned = replace(view, cordoned=True)
    changed, kept = rows.cells(cordoned, None)
    assert not kept and changed["status"].plain != cells["status"].plain
    queued = _queued("n1")
    with_finding, kept = rows.cells(cordoned, queued)
    assert not kept and with_finding["finding"].plain != changed["finding"].plain
    assert rows.cells(cordoned, queued) == (with_finding, True)


def test_nodes_that_left_and_a_new_theme_are_forgotten() -> None:
    rows = NodeRowTexts(CellTexts())
    one, two = NodeView(name="n1"), NodeView(name="n2")
    rows.cells(one, None)
    rows.cells(two, None)
    rows.keep_only({"n2"})
    assert len(rows) == 1 and rows.cells(two, None)[1] and not rows.cells(one, None)[1]
    rows.clear()
    assert len(rows) == 0 and not rows.cells(two, None)[1]
