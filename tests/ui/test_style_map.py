"""The one state map (``gputui/ui/render/style.py``): every state the domain knows has a
look, a value it does not know never reads as fine, every view colours a state alike, and
bold is decided by the role alone."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text

from gputui.domain import labels as L
from gputui.domain.model import NodeMigView, NodeUpgradeStatus, NodeView, Severity, StageStatus
from gputui.domain.upgrade_state import LANES, UpgradeState
from gputui.ui.node_rows import node_cells
from gputui.ui.render.mig import state_text
from gputui.ui.render.node_detail import mig_text, upgrade_text
from gputui.ui.render.style import (
    BOLD_ROLES,
    MIG_LOOK,
    NEUTRAL,
    PLAIN,
    ROLES,
    UNKNOWN_ROLE,
    UPGRADE_LOOK,
    Palette,
    mig_look,
    upgrade_look,
)
from gputui.ui.render.upgrades import SHORT, lane_role, selected_text
from gputui.ui.theme import GPUTUI_THEME, theme_palette
from gputui.ui.widgets.cell_texts import CellTexts
from gputui.ui.widgets.node_table import NodeTable
from gputui.ui.widgets.palette_mixin import widget_palette
from gputui.ui.widgets.status_header import StatusHeader
from tests.ui.conftest import FrozenApp, settle
from tests.ui.helpers import until

H100 = "gke-prod-h100-pool-7f3a-4vvm"  # its driver crash-loops: GPUs 0/8, a crit cell
PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None)
#: a palette where every role has its own colour, so a style names its role
DISTINCT = Palette.from_colours({role: Style(color=f"color({i + 1})")
                                 for i, role in enumerate(ROLES)})
#: any label value, the domain's own states excluded (a newer operator, a hand-made label)
FOREIGN = st.text(max_size=30).filter(
    lambda s: UpgradeState.parse(s) is None and s not in L.MIG_STATES and s)


def test_every_domain_upgrade_and_mig_state_has_a_look() -> None:
    """The maps are built from the domain's lists, so a state added there fails here first."""
    assert set(UPGRADE_LOOK) == set(UpgradeState)
    assert set(L.MIG_STATES) <= set(MIG_LOOK) and "" in MIG_LOOK
    assert set(LANES) == set(UpgradeState) and all(SHORT[state] for state in LANES)
    for look in (*UPGRADE_LOOK.values(), *MIG_LOOK.values()):
        assert look.word and look.role in (*ROLES, NEUTRAL)


@PROPERTY
@given(FOREIGN)
def test_a_state_the_domain_does_not_know_reads_unknown_never_ok(value: str) -> None:
    for look in (upgrade_look(value), mig_look(value)):
        assert look.role == UNKNOWN_ROLE and look.list_role == UNKNOWN_ROLE
        assert look.symbol == "?" and not look.settled
    view = NodeView("n", upgrade_state=value, mig_capable=True, mig_config="all-1g.10gb",
                    mig_state=value)
    cells = node_cells(view)
    assert cells["upgrade"] == (value, UNKNOWN_ROLE)
    assert cells["mig"] == (f"all-1g.10gb {value}", UNKNOWN_ROLE)


def test_done_is_neutral_and_required_no_warning_in_every_view() -> None:
    """The two maps that disagreed (node list: required ``warn``; lanes: done ``ok``) are one:
    done is a node at rest, required only waits for a slot (a stall is a finding)."""
    assert upgrade_look(UpgradeState.DONE).role == NEUTRAL
    assert upgrade_look(UpgradeState.REQUIRED).role == "muted"
    failed = upgrade_look(UpgradeState.FAILED)
    assert failed.role == "crit" and failed.bold
    for state in (UpgradeState.DONE, UpgradeState.REQUIRED):
        assert node_cells(NodeView("n", upgrade_state=state))["upgrade"][1] not in ("warn", "ok")
        assert lane_role(state) not in ("warn", "ok")


def _style_of(text: Text, words: str) -> Style | str:
    """The style of the span that starts at ``words`` (no span: no style)."""
    start = text.plain.index(words)
    return next((span.style for span in text.spans if span.start == start), Style())


@pytest.mark.parametrize("state", list(UpgradeState))
def test_node_list_lanes_and_detail_colour_an_upgrade_state_alike(state: str) -> None:
    look = upgrade_look(state)
    assert node_cells(NodeView("n", upgrade_state=state))["upgrade"][1] == look.list_role
    assert lane_role(state) == look.role
    detail = upgrade_text(NodeView("n", upgrade_state=state), 0.0, DISTINCT)
    assert detail.style == DISTINCT.role(look.role)
    lanes = selected_text(NodeUpgradeStatus("n", state), 0.0, DISTINCT)
    assert _style_of(lanes, f"  {state or 'not evaluated'}") == DISTINCT.role(look.role)


@pytest.mark.parametrize("state", ["", *L.MIG_STATES])
def test_node_list_detail_and_mig_view_colour_a_mig_state_alike(state: str) -> None:
    look = mig_look(state)
    view = NodeView("n", mig_capable=True, mig_config="all-1g.10gb", mig_state=state or None)
    assert node_cells(view)["mig"][1] == look.list_role
    assert _style_of(mig_text(view, 0.0, DISTINCT), look.word if not state else state) \
        == DISTINCT.role(look.role)
    mig = NodeMigView("n", "all-1g.10gb", None, state or None, None, None, capable=True)
    card = state_text(mig, 0.0, DISTINCT)
    assert card.style == DISTINCT.role(look.role) and card.plain.startswith(look.symbol)


def test_bold_is_the_role_s_alone_and_said_outright() -> None:
    """Bold for exactly the bold roles; every other role says "not bold" outright, so its
    words inside a bold line (the header's first) keep their weight."""
    for role in ROLES:
        assert DISTINCT.role(role).bold is (role in BOLD_ROLES)
        assert DISTINCT.colour(role).bold is False
    assert PLAIN.role("crit").bold is True and PLAIN.role("ok").bold is None
    assert DISTINCT.role(NEUTRAL) == Style()
    assert DISTINCT.severity(Severity.CRITICAL).bold and not DISTINCT.severity(Severity.WARNING).bold
    assert DISTINCT.status(StageStatus.FAILED).bold and not DISTINCT.status(StageStatus.READY).bold


def test_table_cells_take_the_palette_s_styles() -> None:
    cells = CellTexts()
    cells.restyle(DISTINCT)
    for role in ROLES:
        assert cells.style(role) == DISTINCT.role(role)
    assert cells.style(NEUTRAL) == ""


def test_the_theme_palette_resolves_each_role_s_variable_and_its_fallback() -> None:
    palette = theme_palette({"gpu-crit": "red", "success": "blue", "gpu-warn": "not a colour"})
    console = Console(width=40, record=True, color_system="truecolor", file=io.StringIO())
    console.print(Text("x", style=palette.role("crit")), Text("y", style=palette.role("ok")))
    out = console.export_text(styles=True)
    assert "\x1b[1;38;2;255;0;0mx" in out  # crit: its variable, bold
    assert "38;2;0;0;255my" in out  # ok: no gpu-ok, the theme's success colour
    assert palette.colour("warn").color is None  # unreadable: uncoloured, not a crash
    gputui = theme_palette(dict(GPUTUI_THEME.variables))
    assert all(gputui.colour(role).color is not None for role in ROLES)


async def test_a_theme_change_builds_one_palette_that_every_view_draws_with(
        frozen_app: FrozenApp) -> None:
    """The app rebuilds its palette when the theme changes; the node list recolours its
    cells from that same object, and the header and panes draw with it too."""
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = app.palette
        assert before.colour("crit").color is not None
        table = app.screen.query_one(NodeTable)
        assert table.get_cell(H100, "gpus").style == before.role("crit")
        app.theme = "textual-light"
        await until(pilot, lambda: app.palette is not before
                    and table.get_cell(H100, "gpus").style == app.palette.role("crit"))
        assert app.palette.colour("crit") != before.colour("crit")
        for widget in (app.screen.query_one(StatusHeader), table):
            assert widget_palette(widget) is app.palette


