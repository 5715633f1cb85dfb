"""The audit log in the app: a bad path disables actions at start and says why; a path that
goes bad later makes the dialog's apply fail with the reason, nothing sent."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.confirm import ConfirmScreen
from gputui.ui.screens.nodes import NodesScreen


def _app(cluster: EmulatedCluster, tmp_path: Path, audit: Path,
         notes: list[str]) -> tuple[GpuTuiApp, Any]:
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings = Settings(kubeconfig=str(config), namespace="gpu-operator",
                        audit_log=str(audit))
    source = open_source(settings, watch_timeout=5)
    writer = writer_for_source(source, read_only=False)
    app = make_app(settings, session_of(settings, source, writer=writer))
    app.min_snapshot_interval = 0.0
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    return app, writer


async def until(pilot: Any, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


async def _ready(pilot: Any, app: GpuTuiApp) -> NodesScreen:
    await until(pilot, lambda: len(app.snapshot.nodes) == 1 and not app.snapshot.loading)
    await until(pilot, lambda: app.runner is not None and not app.runner.permissions.pending)
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    await until(pilot, lambda: screen.table.row_count == 1)
    screen.table.focus()
    return screen


async def test_a_bad_audit_path_disables_actions_at_start_and_says_why(
        one_node_cluster: EmulatedCluster, request_log: list[tuple[str, str]],
        tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    audit.mkdir()
    notes: list[str] = []
    app, writer = _app(one_node_cluster, tmp_path, audit, notes)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await _ready(pilot, app)
            await until(pilot, lambda: any("Actions are disabled" in n for n in notes))
            assert any(f"{audit} is a directory" in n for n in notes)
            assert app.action_blocks()["cordon"].startswith("the audit log cannot be written")
            # (a greyed key's own answer is the key bindings' business; the flow refuses)
            app.start_action("cordon", ("gpu-1",))
            await pilot.pause(0.2)
            assert any(n.startswith("Cordon is not available: the audit log cannot be "
                                    "written") for n in notes), notes
            assert not isinstance(app.screen, ConfirmScreen)
    finally:
        writer.close()
    assert [p for m, p in request_log if m == "PATCH"] == []


async def test_a_path_gone_bad_after_start_fails_the_apply_with_the_reason(
        one_node_cluster: EmulatedCluster, request_log: list[tuple[str, str]],
        tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    notes: list[str] = []
    app, writer = _app(one_node_cluster, tmp_path, audit, notes)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await _ready(pilot, app)
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                        and app.screen.dry_run is not None)
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen)
            audit.unlink()  # planted while the dialog was open
            audit.symlink_to(tmp_path / "kubeconfig")
            await pilot.press("y")
            await until(pilot, lambda: dialog.result is not None)
            assert dialog.result is not None and not dialog.result.ok
            await until(pilot, lambda: any("nothing was sent" in n for n in notes))
            assert any(f"{audit} is a symbolic link" in n for n in notes)
    finally:
        writer.close()
    assert [p for m, p in request_log if m == "PATCH"] == ["/api/v1/nodes/gpu-1"]  # dry run
    assert "unschedulable" not in one_node_cluster.store.get("nodes", "gpu-1", None)["spec"]
