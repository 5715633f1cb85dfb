"""DataTable internals: listed in one module, checked against the running Textual.

These fail loudly on a Textual upgrade that moves what StableTable relies on, and prove that
the table then behaves as a plain DataTable (slower, never stale) instead of painting old
cells. The first-paint race is pinned here too: a row painted before the table's idle
measurement must be painted again at the measured widths.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from gputui.ui.widgets import datatable_internals as dt
from gputui.ui.widgets.stable_table import StableTable

PACKAGE = Path(__file__).resolve().parents[2] / "gputui"
NAMES = ["gke-prod-a100-pool-2b9c-8khl", "gke-prod-a100-pool-2b9c-qvzd"]


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StableTable(id="table")


def line(table: StableTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def _table_with_columns(pilot: object, app: TableApp) -> StableTable:
    table = app.query_one(StableTable)
    table.add_column(Text("NAME"), key="name")
    table.add_column(Text("STATUS"), key="status")
    await pilot.pause()  # type: ignore[attr-defined]
    return table


async def test_the_running_textual_matches_every_listed_internal() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _table_with_columns(pilot, app)
        assert dt.contract_problems(table) == []
        assert table.stable


async def test_another_textual_falls_back_to_plain_datatable(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(dt, "TESTED_TEXTUAL", "0.0.1")
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _table_with_columns(pilot, app)
        assert dt.contract_problems(table) == [
            f"textual {__import__('textual').__version__} (internals read from 0.0.1)"]
        table.add_row(Text("a"), Text("Ready"), key="a")
        await pilot.pause()
        assert not table.stable and "falls back to plain DataTable" in caplog.text
        table.patch_row("a", {"name": Text(NAMES[0]), "status": Text("NotReady")})
        table.remove_rows(["missing"])
        await pilot.pause()
        await pilot.pause()
        assert line(table, 1).split() == [NAMES[0], "NotReady"]


def test_no_other_module_names_the_internals() -> None:
    pattern = re.compile(r"\.({})\b".format("|".join(map(re.escape, dt.ATTRIBUTES))))
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                 if path.name != "datatable_internals.py" and pattern.search(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("repeat", range(3))
async def test_a_row_painted_before_the_idle_measurement_is_painted_again(
        repeat: int) -> None:
    """The first-paint race: a loaded machine paints between ``add_row`` and the idle
    that measures the columns; the row kept its label-width rendering (``gke-  Ready``)."""
    app = TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _table_with_columns(pilot, app)
        for name in NAMES:
            table.add_row(Text(name), Text("Ready"), key=name)
        assert line(table, 1).split() == ["gke-", "Ready"]  # painted before the idle
        await table._on_idle(None)  # type: ignore[arg-type]  # the measurement alone
        assert line(table, 1).split() == [NAMES[0], "Ready"]
        assert line(table, 2).split() == [NAMES[1], "Ready"]


class TwoTablesApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StableTable(id="stable")
        yield DataTable(id="plain")


async def test_a_fill_in_slices_measures_and_orders_rows_as_textual_does() -> None:
    """Appending rows extends the kept row order and line offsets, and new rows are
    measured from their Text directly: after every slice the table must agree with a plain
    DataTable filled the same way (widths, including wide characters, virtual size, order),
    and a re-sort between slices must not leave the old order behind."""
    app = TwoTablesApp()
    async with app.run_test(size=(100, 30)) as pilot:
        tables = [app.query_one("#stable", StableTable), app.query_one("#plain", DataTable)]
        for table in tables:
            table.add_column(Text("NAME"), key="name")
            table.add_column(Text("STATUS"), key="status")
        await pilot.pause()
        stable, plain = tables
        for batch in range(4):
            for table in tables:
                for index in range(batch * 30, batch * 30 + 30):
                    status = "GPU 日本" * (index % 3) if index % 7 else f"NotReady {index}"
                    table.add_row(Text(f"node-{index:03}"), Text(status), key=f"n{index}")
            await pilot.pause()
            if batch == 2:
                for table in tables:
                    table.sort("name", key=lambda name: name.plain, reverse=True)
                await pilot.pause()
            assert [r.key for r in stable.ordered_rows] == [r.key for r in plain.ordered_rows]
            assert stable._y_offsets == plain._y_offsets
            assert [c.content_width for c in stable.columns.values()] == [
                c.content_width for c in plain.columns.values()]
            assert stable.virtual_size == plain.virtual_size
        assert stable.stable and stable.row_count == 120
