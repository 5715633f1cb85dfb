"""The views' contract (``gputui.ui.contracts``): every view the app registers fulfils it, and
a misspelt method fails loudly (at registration and at type-check) instead of leaving a view
the app silently never feeds (issue 20)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from textual.screen import ModalScreen
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.ui.contracts import (
    ContractError,
    DetailPane,
    SnapshotView,
    ViewScreen,
    check_contract,
    fulfils,
)
from gputui.ui.screens.base import GpuScreen
from gputui.ui.screens.nodes import DETAIL_TABS, NodesScreen, detail_tabs
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.widgets.node_scoped import NodeScopedMixin
from tests.ui.conftest import FrozenApp, settle

ROOT = Path(__file__).resolve().parents[2]


async def test_every_view_in_the_app_is_a_view_screen_and_gets_the_greyed_actions(
        frozen_app: FrozenApp) -> None:
    """Each mode of the app's screen map, once shown, is a ``ViewScreen``; the greyed actions
    (a replay has no cluster to write to: all of them) reach each one as the same value."""
    app = frozen_app("upgrade-rolling")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert set(app.MODES) == {"nodes", "findings", "upgrades", "mig", "joins", "ops",
                                  "timeline"}
        for mode in app.MODES:
            await app.switch_mode(mode)
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, GpuScreen) and isinstance(screen, ViewScreen), mode
            check_contract(type(screen), ViewScreen)
            assert screen.blocked_actions == app.action_blocks() != {}, mode
        await app.switch_mode("nodes")
        await settle(pilot)
        assert isinstance(app.screen, NodesScreen)
        for tab, _, _ in DETAIL_TABS:
            pane = app.screen.query_one(f"#detail-{tab}")
            assert isinstance(pane, DetailPane), tab


def test_the_pod_log_screen_is_registered_as_a_snapshot_view() -> None:
    check_contract(PodLogScreen, SnapshotView)


def test_a_misspelt_view_method_fails_when_the_class_is_defined() -> None:
    """``show_metric`` for ``show_metrics``: before, the app's ``getattr`` skipped it."""
    with pytest.raises(ContractError, match=r"does not implement ViewScreen\.show_metrics"):
        class Misspelt(GpuScreen):
            def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None: ...

            def show_node(self, node_name: str | None) -> None: ...

            def show_metric(self, reading: MetricsReading, now: float) -> None: ...


def test_a_misnamed_parameter_fails_when_the_class_is_defined() -> None:
    with pytest.raises(ContractError, match=r"Misnamed\.show_node\(self, node\)"):
        class Misnamed(GpuScreen):
            def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None: ...

            def show_node(self, node: str | None) -> None:  # type: ignore[override]
                ...

            def show_metrics(self, reading: MetricsReading, now: float) -> None: ...


def test_a_misspelt_detail_pane_fails_when_its_tab_is_registered() -> None:
    class Pane(NodeScopedMixin, Static):
        def show_metric(self, reading: MetricsReading, now: float) -> None: ...

    with pytest.raises(ContractError, match=r"Pane does not implement DetailPane\.show_metrics"):
        detail_tabs(("pane", Pane, "Pane"))


def test_a_misspelt_modal_fails_where_it_says_what_it_fulfils() -> None:
    with pytest.raises(ContractError, match=r"SnapshotView\.show_snapshot"):
        @fulfils(SnapshotView)
        class Modal(ModalScreen[None]):
            def show_snapshots(self, snapshot: ClusterSnapshot, now: float) -> None: ...


def test_mypy_rejects_registering_a_view_with_a_misspelt_method(tmp_path: Path) -> None:
    """The same slip at type-check: the class stays abstract, and ``view_modes`` (the app's
    ``MODES``) takes only concrete views."""
    snippet = tmp_path / "misspelt_view.py"
    snippet.write_text(textwrap.dedent("""\
        from __future__ import annotations

        from gputui.domain.metrics import MetricsReading
        from gputui.domain.model import ClusterSnapshot
        from gputui.ui.screens.base import GpuScreen, view_modes


        class Misspelt(GpuScreen):
            def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None: ...
            def show_node(self, node_name: str | None) -> None: ...
            def show_metric(self, reading: MetricsReading, now: float) -> None: ...


        MODES = view_modes(misspelt=Misspelt)
        """))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache"), str(snippet)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Only concrete class can be given where "type[GpuScreen]"' in result.stdout
    assert f"{snippet.name}:14:" in result.stdout
