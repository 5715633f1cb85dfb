"""The audit log in the app: a bad path disables actions at start and says why; a path that
goes bad later makes the dialog's apply fail with the reason, nothing sent."""

from __future__ import annotations

from pathlib import Path

from gputui.sim.cluster import EmulatedCluster
from gputui.ui.screens.confirm import ConfirmScreen
from tests.ui.helpers import app_with_audit, ready, until


async def test_a_bad_audit_path_disables_actions_at_start_and_says_why(
        one_node_cluster: EmulatedCluster, request_log: list[tuple[str, str]],
        tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    audit.mkdir()
    notes: list[str] = []
    app, writer = app_with_audit(one_node_cluster, tmp_path, audit, notes)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app, nodes=1)
            await until(pilot, lambda: any("Actions are disabled" in n for n in notes))
            assert any(f"{audit} is a directory" in n for n in notes)
            assert app.action_blocks()["cordon"].startswith("the audit log cannot be written")
            # (a greyed key's own answer is the key bindings' business; the flow refuses)
            app.actions.start("cordon", ("gpu-1",))
            await until(pilot, lambda: any(n.startswith("Cordon is not available: the audit "
                                                        "log cannot be written") for n in notes),
                        why=lambda: notes)
            assert not isinstance(app.screen, ConfirmScreen)
    finally:
        writer.close()
    assert [p for m, p in request_log if m == "PATCH"] == []


async def test_a_path_gone_bad_after_start_fails_the_apply_with_the_reason(
        one_node_cluster: EmulatedCluster, request_log: list[tuple[str, str]],
        tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    notes: list[str] = []
    app, writer = app_with_audit(one_node_cluster, tmp_path, audit, notes)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app, nodes=1)
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
