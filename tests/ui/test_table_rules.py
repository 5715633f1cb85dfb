"""Rules for the UI's tables: sorting reads the keys cells carry, never the text shown.

Three tables once recovered what to sort by from their own cells' text (the node name from
the name cell, a severity from ``"✖ crit"``, a lane from ``"▾ drain-required (2)"``): a
wording change broke the order without a sound. These grep the source so it cannot come
back: no module calls ``DataTable.sort`` (the line tables sort their rows by the keys their
cells carry, ``KeyedRows.sort_by_keys``), and no table module reads a cell's shown text
(``.plain``).
"""

from __future__ import annotations

import re
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "gputui" / "ui"
#: ``DataTable.sort`` takes column keys positionally; ``list.sort`` only keywords
TABLE_SORT = re.compile(r"\.sort\(\s*(?!key\s*=|reverse\s*=|\))")
#: a module that builds or drives a table
TABLES = re.compile(r"\b(DataTable|LineTable|TableView|KeyedRows)\b")


def _sources() -> dict[str, str]:
    return {str(path.relative_to(UI)): path.read_text() for path in sorted(UI.rglob("*.py"))}


def test_no_module_sorts_a_datatable() -> None:
    offenders = [name for name, text in _sources().items() if TABLE_SORT.search(text)]
    assert offenders == [], "sort through LineTable.sort_rows (cells carry their keys)"


def test_no_table_module_reads_the_text_its_cells_show() -> None:
    """Modules that build or drive a table (they name one) carry values in cells instead."""
    offenders = [f"{name}: {line.strip()}" for name, text in _sources().items()
                 if TABLES.search(text)
                 for line in text.splitlines() if re.search(r"\.plain\b", line)]
    assert offenders == [], "carry the value in the cell (SortableText), do not parse text"


def test_the_rules_see_what_they_forbid() -> None:
    """The patterns match the code the three tables used to have."""
    assert TABLE_SORT.search('self.sort("name", key=lambda n: views[n.plain])')
    assert TABLE_SORT.search('self.sort("severity", "node", "code", key=_snapshot_order)')
    assert TABLE_SORT.search("self.sort(*columns, key=sort_key)")
    assert not TABLE_SORT.search("names.sort(key=lambda n: value(n), reverse=True)")
    assert not TABLE_SORT.search("names.sort()")
    assert re.search(r"\.plain\b", "plain = cell.plain.strip()")
