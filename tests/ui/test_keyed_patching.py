"""Keyed patching on the line table: rows patched by key, sorted by the keys their cells
carry (every table of the UI is a line table now: :mod:`gputui.ui.widgets.line_table`), and
the findings and the node list sorted by those keys exactly as by their findings and views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult

from gputui.domain.model import Finding, Severity
from gputui.ui.node_rows import SORTABLE, queue_findings, sort_value
from gputui.ui.widgets.findings_table import FindingsTable
from gputui.ui.widgets.line_table import LineTable
from gputui.ui.widgets.node_table import NodeTable
from gputui.ui.widgets.sortable_text import SortableText, same_cell, sort_key
from tests.ui.conftest import FrozenApp, settle

NA = -1.0  # the sort key of a duration that is not known ("—"): before every known one


def job(name: str, age: str, seconds: float, state: str = "Running") -> dict[str, Text]:
    """A row: a name, an age shown as ``12m``/``3h``/``—`` but sorted by seconds."""
    return {"name": SortableText(name, name), "age": SortableText(age, seconds),
            "state": Text(state)}


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield LineTable(id="table")


async def _mounted(pilot: Any, app: TableApp) -> LineTable:
    table = app.query_one(LineTable)
    for column in ("name", "age", "state"):
        table.add_column(column, column.upper())
    await pilot.pause()
    return table


def order(table: LineTable) -> list[str]:
    return list(table.row_keys)


def spy(table: LineTable, name: str, calls: list[tuple[str, str, Any]]) -> None:
    """Record ``(method, row keys, what else)`` for each call of ``table.<name>``."""
    method = getattr(table, name)

    def record(*args: Any) -> Any:
        rows = ",".join(sorted(args[0])) if name == "drop_rows" else args[0]
        rest = sorted(args[1]) if name == "write_cells" else None
        calls.append((name, rows, rest))
        return method(*args)
    setattr(table, name, record)


async def test_rows_are_added_written_and_removed_by_key_never_cleared() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.sort_columns = ("name",)
        table.show_rows({"a": job("a", "12m", 720), "b": job("b", "3h", 10800)})
        calls: list[tuple[str, str, Any]] = []
        for name in ("add_row", "drop_rows", "write_cells"):
            spy(table, name, calls)
        table.show_rows({"b": job("b", "3h", 10800, "Failed"), "c": job("c", "—", NA)})
        await pilot.pause()
        # a went, c came, and only b's changed cell was written (not its name and age)
        assert sorted(calls) == [("add_row", "c", None), ("drop_rows", "a", None),
                                 ("write_cells", "b", ["state"])]
        assert order(table) == ["b", "c"]
        assert table.get_cell("b", "state").plain == "Failed"
        await pilot.pause()
        assert "Failed" in "".join(s.text for s in table.render_line(1))


async def test_a_column_whose_text_is_a_duration_sorts_by_the_seconds_it_carries() -> None:
    """``12m`` < ``3h`` < ``2d`` as durations, not as text (``"12m" > "2d"``), and an
    unknown ``—`` goes first, wherever the dash falls among characters."""
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.sort_columns = ("age",)
        table.show_rows({"x": job("x", "2d", 172800), "y": job("y", "12m", 720),
                         "z": job("z", "3h", 10800), "w": job("w", "—", NA)})
        assert order(table) == ["w", "y", "z", "x"]
        assert sorted(["2d", "12m", "3h", "—"]) != ["—", "12m", "3h", "2d"]  # text would lie
        table.sort_reverse = True
        table.sort_rows()
        assert order(table) == ["x", "z", "y", "w"]


async def test_a_changed_sort_key_moves_the_row_and_the_cursor_follows_its_key() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.sort_columns = ("age",)
        rows = {"a": job("a", "1m", 60), "b": job("b", "2m", 120), "c": job("c", "3m", 180)}
        table.show_rows(rows)
        assert table.move_to_key("b") and table.current_key == "b" and table.cursor_row == 1
        # a cell outside the sort columns changed: the row stays where it is
        assert not table.put_row("b", job("b", "2m", 120, "Pending"))
        # the same text with another key still moves it (the key is what sorts)
        assert table.put_row("b", {"age": SortableText("2m", 999)})
        cursor = table.current_key
        table.sort_rows()
        table.move_to_key(cursor)
        assert order(table) == ["a", "c", "b"] and table.current_key == "b"
        assert table.cursor_row == 2
        # the patch of show_rows keeps it too
        current = table.current_key
        table.show_rows({**rows, "b": job("b", "0s", 0)})
        table.move_to_key(current)
        assert order(table) == ["b", "a", "c"] and table.current_key == "b"
        assert not table.move_to_key("gone")


async def test_rows_whose_keys_tie_keep_the_order_they_came_in() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.sort_columns = ("age",)
        names = ["q", "e", "x", "b", "m"]
        table.show_rows({name: job(name, "5m", 300) for name in names})
        assert order(table) == names
        table.show_rows({name: job(name, "5m", 300, "Done") for name in names})
        assert order(table) == names
        # a second column breaks ties when the table asks for a total order
        table.sort_columns = ("age", "name")
        table.sort_rows()
        assert order(table) == sorted(names)


async def test_a_colour_change_alone_is_written() -> None:
    """``Text.__eq__`` ignores the style; a re-coloured cell (theme change) must be written."""
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.show_rows({"a": job("a", "1m", 60)})
        red = Text("Running", style=Style(color="red"))
        assert red == Text("Running") and not same_cell(Text("Running"), red)
        table.put_row("a", {"state": red})
        assert table.get_cell("a", "state").style == Style(color="red")


async def test_a_sorted_column_without_carried_keys_fails_loudly() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _mounted(pilot, app)
        table.show_rows({"a": job("a", "1m", 60), "b": job("b", "2m", 120)})
        table.sort_columns = ("state",)
        with pytest.raises(TypeError, match="without a sort key"):
            table.sort_rows()


def test_a_sortable_text_renders_and_compares_as_its_text() -> None:
    cell = SortableText("12m", 720, style="bold", no_wrap=True, end="")
    assert cell.plain == "12m" and cell.sort_key == 720 and cell == Text("12m")
    assert not same_cell(cell, SortableText("12m", 721, style="bold", no_wrap=True, end=""))
    assert same_cell(cell, SortableText("12m", 720, style="bold", no_wrap=True, end=""))
    assert sort_key(cell) == 720


# ------------------------------------------------------------------- the three tables
def _finding(code: str, severity: Severity, node: str | None, subject: str = "") -> Finding:
    return Finding(code, severity, node, f"{code} on {node}", "", subject=subject)


class FindingsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FindingsTable(id="findings")


async def test_findings_sort_most_severe_first_and_keep_the_cursor_on_their_finding() -> None:
    crit = _finding("driver-pod-failing", Severity.CRITICAL, "gke-b")
    warn_b = _finding("gpus-unavailable", Severity.WARNING, "gke-b")
    warn_a = _finding("xid-errors", Severity.WARNING, "gke-a")
    cluster = _finding("upgrade-stalled", Severity.WARNING, None)
    info = _finding("mig-pending", Severity.INFO, "gke-a")
    app = FindingsApp()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(FindingsTable)
        await pilot.pause()
        table.show_findings([info, warn_a, warn_b, cluster])
        assert [table.findings[k] for k in order(table)] == [cluster, warn_a, warn_b, info]
        table.move_cursor(row=2)
        assert table.selected == warn_b
        table.show_findings([info, warn_a, warn_b, cluster, crit])  # one comes above
        assert [table.findings[k] for k in order(table)] == [crit, cluster, warn_a, warn_b,
                                                              info]
        assert table.selected == warn_b and table.cursor_row == 3


@pytest.mark.parametrize("scenario", ["driver-crashloop", "upgrade-failed"])
async def test_the_node_list_sorts_by_carried_keys_exactly_as_by_its_views(
        frozen_app: FrozenApp, scenario: str) -> None:
    """Every sortable column, both ways: the order of the carried cell keys is the order
    of :func:`sort_value` over the node views (ties by name)."""
    app = frozen_app(scenario)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        nodes, queued = app.snapshot.nodes, queue_findings(app.snapshot.findings)
        for column in SORTABLE:
            for reverse in (False, True):
                table.sort_by(column, reverse=reverse)
                key: Callable[[str], Any] = (
                    lambda n, c=column: sort_value(c, nodes[n], queued.get(n)))
                assert table.shown_nodes == sorted(nodes, key=key, reverse=reverse), column
