"""Operations through the app (Pilot), against the emulated cluster over HTTP with the real
source, writer and audit log: ``b`` keeps a drain running behind the screen, the header and
``:ops`` follow it, ``enter`` reopens its progress, ``x`` and ``esc`` stop it (audited as
stopped), a second plan on a held node is refused naming the holder, quitting asks first,
and an exception in an action's ``plan()`` is one sentence while the app stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gputui.actions.base import Risk, Scope
from gputui.actions.operations import OpState
from gputui.ui.app import GpuTuiApp
from gputui.ui.render.operations import BUSY_MARK
from gputui.ui.screens.ask import AskScreen
from gputui.ui.screens.confirm import ConfirmScreen, ParamPrompt
from gputui.ui.screens.operations import OperationsScreen
from gputui.ui.screens.upgrades import UpgradesScreen
from gputui.ui.widgets.mark_column import ARROW
from gputui.ui.widgets.status_header import StatusHeader
from tests.helpers import poll
from tests.ui.helpers import (
    CANARY,
    answer_prompt,
    cluster,
    demo,
    fast_polls,
    live_app,
    nodes_screen,
    ready,
    until,
)

__all__ = ["cluster", "demo", "fast_polls", "live_app"]


def header_text(app: GpuTuiApp) -> str:
    """What the active screen's header shows now."""
    return str(app.screen.query_one(StatusHeader).render())


def audit_lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]


async def start_drain(pilot: Any, app: GpuTuiApp) -> ConfirmScreen:
    """``r`` on the cursor's node (gpu-1, whose trainer a budget protects), default
    options and timeout (300 s), ``y``; returns the dialog once a round was reported."""
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                and app.screen.spec.name == "timeout")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                and app.screen.dry_run is not None)
    dialog = app.screen
    assert isinstance(dialog, ConfirmScreen)
    await pilot.press("y")
    progress = dialog.query_one("#confirm-progress")
    await until(pilot, lambda: "refused by PodDisruptionBudget trainer-pdb"
                in str(progress.render()))
    assert not dialog.query_one("#confirm-background").has_class("hidden")  # b on the key line
    return dialog


async def test_b_backgrounds_a_drain_the_header_and_ops_follow_it_and_x_stops_it(
        live_app: Any, tmp_path: Path) -> None:
    app = live_app()
    notes: list[tuple[str, str]] = []
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        await start_drain(pilot, app)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        (op,) = app.operations.running()
        assert op.title == "Drain gpu-1" and op.targets == ("gpu-1",)
        # the header counts it and says what it does; the try count moves as it retries
        await until(pilot, lambda: "⟳ 1 running: drain gpu-1 0/1 evicted, 1 refused by "
                    "budget trainer-pdb, try" in header_text(app))
        first = header_text(app)
        await until(pilot, lambda: header_text(app) != first)
        # the cursor's row carries the ▶, then the running mark
        assert str(screen.table.get_cell("gpu-1", "mark")) == ARROW + BUSY_MARK
        assert str(screen.table.get_cell("gpu-2", "mark")) == "  "
        # another view, then back: the line is there too
        await pilot.press("2")
        await until(pilot, lambda: isinstance(app.screen, UpgradesScreen))
        await until(pilot, lambda: "⟳ 1 running: drain gpu-1" in header_text(app))
        await pilot.press("1")
        await until(pilot, lambda: app.screen is screen and "⟳ 1 running" in header_text(app))
        # :ops lists it with its pods
        await pilot.press("colon", *"ops", "enter")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen))
        ops = app.screen
        assert isinstance(ops, OperationsScreen)
        await until(pilot, lambda: ops.table.row_count == 1)
        detail = str(ops.query_one("#ops-detail").render())
        assert "Drain gpu-1" in detail and "ml/train-0" in detail and op.id in detail
        assert "running" in str(ops.table.get_cell(op.id, "state"))
        app.notify = (lambda message, **kw:  # type: ignore[method-assign]
                      notes.append((str(kw.get("title")), str(message))))
        # x asks first; n keeps it running
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is ops)
        assert app.operations.get(op.id).running  # type: ignore[union-attr]
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press("y")
        await until(pilot, lambda: not app.operations.get(op.id).running)  # type: ignore[union-attr]
        ended = app.operations.get(op.id)
        assert ended is not None and ended.state is OpState.STOPPED
        await until(pilot, lambda: "stopped" in str(ops.table.get_cell(op.id, "state")))
        await until(pilot, lambda: any(title == "Stopped" for title, _ in notes))
        await until(pilot, lambda: "⟳" not in header_text(app))
    intent, outcome = audit_lines(tmp_path)
    assert intent["id"] == outcome["id"] == op.id and intent["action"] == "drain"
    assert outcome["interrupted"] == "x"
    assert outcome["result"].startswith("cancelled: drain of gpu-1 stopped")


async def test_enter_in_ops_reopens_the_live_progress_and_esc_stops_it(
        live_app: Any, tmp_path: Path) -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        await start_drain(pilot, app)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("colon", *"ops", "enter")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen)
                    and app.screen.table.row_count == 1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.applying
        progress = dialog.query_one("#confirm-progress")
        # the same view: plan, progress, and new rounds keep arriving
        await until(pilot, lambda: "blocked: ml/train-0: refused by PodDisruptionBudget "
                    "trainer-pdb" in str(progress.render()))
        await pilot.press("b")  # closes it again; it still runs
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen))
        assert app.operations.running()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await pilot.press("escape")
        # stopped after its cordon: the dialog stays to say so and offer u; esc closes it
        await until(pilot, lambda: dialog.result is not None, timeout=20)
        assert dialog.result is not None and dialog.result.cordoned == ("gpu-1",)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen), timeout=20)
        assert not app.operations.running()
        assert app.operations.all()[0].state is OpState.STOPPED
    outcome = audit_lines(tmp_path)[-1]
    assert outcome["phase"] == "outcome" and outcome["interrupted"] == "esc"


async def test_a_plan_on_a_node_an_operation_holds_is_refused_naming_it(
        live_app: Any, tmp_path: Path) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        await start_drain(pilot, app)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        (op,) = app.operations.running()
        await pilot.press("u")  # gpu-1, which the drain holds (and has cordoned)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.blocked == (
            f"gpu-1 is held by the running operation 'Drain gpu-1' ({op.id[:8]}); wait for "
            "it or stop it in :ops")
        assert dialog.query_one("#confirm-yes").disabled
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("down", "c")  # gpu-2 is free
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        assert app.screen.plan.blocked is None  # type: ignore[attr-defined]
        await pilot.press("y")
        await until(pilot, lambda: app.snapshot.nodes["gpu-2"].cordoned)
        app.operations.stop(op.id, "x")
        await until(pilot, lambda: not app.operations.running())
    intents = [line["action"] for line in audit_lines(tmp_path) if line["phase"] == "intent"]
    assert intents == ["drain", "cordon"]  # the refused cordon of gpu-1 sent nothing


async def test_quit_with_an_operation_running_asks_first_and_stops_it(
        live_app: Any, tmp_path: Path) -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        await start_drain(pilot, app)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        question = str(app.screen.query_one("#ask-question").render())
        assert question == "1 operation running: stop and quit?"
        await pilot.press("escape")  # stay
        await until(pilot, lambda: app.screen is screen)
        assert app.operations.running() and not app.exit_guard.exiting
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.exit_guard.exiting)
    assert poll(lambda: audit_lines(tmp_path)[-1]["phase"] == "outcome")
    outcome = audit_lines(tmp_path)[-1]
    assert outcome["phase"] == "outcome" and outcome["interrupted"] == "quit"
    assert app.operations.all()[0].state is OpState.INTERRUPTED


class _Broken:
    """An action whose ``plan()`` raises (a bug): the session must survive it."""

    id = "test_broken"
    title = "Broken"
    tooltip = "test only"
    keys = ""
    aliases: tuple[str, ...] = ()
    scope = Scope.NODES
    risk = Risk.SAFE
    permissions: tuple[Any, ...] = ()
    params: tuple[Any, ...] = ()

    def plan(self, snapshot: Any, targets: Any, params: Any) -> Any:
        raise KeyError("nvidia.com/gpu.product")

    def apply(self, plan: Any, writer: Any, progress: Any, cancel: Any) -> Any:
        raise AssertionError("never applied")


async def test_an_exception_in_plan_is_one_sentence_and_the_app_stays(
        live_app: Any, tmp_path: Path) -> None:
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        app.notify = (lambda message, **kw:  # type: ignore[method-assign]
                      notes.append(str(message)))
        app.actions.plan_in_worker(_Broken(), ("gpu-1",))  # type: ignore[arg-type]
        await until(pilot, lambda: bool(notes))
        assert notes == [("Broken: planning failed: KeyError: 'nvidia.com/gpu.product'; "
                          "nothing was sent")]
        assert app.is_running and app.screen is screen
        await pilot.press("c")  # and the next action still works
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        await pilot.press("y")
        await until(pilot, lambda: app.snapshot.nodes["gpu-1"].cordoned)
    lines = audit_lines(tmp_path)
    assert [line["phase"] for line in lines] == ["intent", "outcome"]
    assert lines[0]["action"] == "cordon"  # the broken action sent nothing


async def test_b_before_y_keeps_nothing_running(live_app: Any) -> None:
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        app.notify = (lambda message, **kw:  # type: ignore[method-assign]
                      notes.append(str(message)))
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("b")
        await until(pilot, lambda: bool(notes))
        assert isinstance(app.screen, ConfirmScreen) and not app.operations.all()
        assert notes == ["nothing runs yet: b keeps a running action in the background"]


async def test_a_canary_runs_in_the_background_and_x_stops_it_with_its_holds_said(
        demo: Any, fast_polls: None, tmp_path: Path) -> None:
    """The same journey for a canary: at speed 1 the canary node takes minutes to roll, so
    the operation is still watching it when it is backgrounded, listed and stopped."""
    app = demo(CANARY, speed=1)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await nodes_screen(pilot, app, 4)
        await until(pilot, lambda: app.snapshot.upgrade.done == 4, timeout=60)
        canary = min(app.snapshot.nodes)
        screen.show_node(canary)
        await until(pilot, lambda: screen.table.selected_node == canary)
        app.actions.start("upgrade-canary", (canary,))
        await answer_prompt(pilot, app, "580.82.07")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await pilot.press(*"580.82.07", "enter")
        progress = dialog.query_one("#confirm-progress")
        await until(pilot, lambda: f"canary {canary}:" in str(progress.render()), timeout=30)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        (op,) = app.operations.running()
        short = canary.rsplit("-", 1)[1]
        await until(pilot, lambda: f"⟳ 1 running: canary {short} 2/5: canary {canary}"
                    in header_text(app) or f"⟳ 1: canary {short} 2/5" in header_text(app))
        assert str(screen.table.get_cell(canary, "mark")).endswith(BUSY_MARK)
        await pilot.press("colon", *"ops", "enter")
        await until(pilot, lambda: isinstance(app.screen, OperationsScreen)
                    and app.screen.table.row_count == 1)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press("y")
        await until(pilot, lambda: not app.operations.running(), timeout=20)
        ended = app.operations.get(op.id)
        assert ended is not None and ended.state is OpState.STOPPED
        assert ended.result is not None and "holds left on 3 node(s)" in ended.result.summary
    outcome = audit_lines(tmp_path)[-1]
    assert outcome["id"] == op.id and outcome["interrupted"] == "x"
    assert outcome["result"].startswith("cancelled: canary stopped while")


async def test_an_exception_in_the_dry_run_refuses_the_plan_and_the_app_stays(
        live_app: Any, tmp_path: Path, monkeypatch: Any) -> None:
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        assert app.runner is not None

        def broken(*args: Any) -> Any:
            raise ValueError("no such pod list")

        monkeypatch.setattr(app.runner, "dry_run", broken)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.dry_run is not None
        assert dialog.dry_run.refusal == ("the dry run failed: ValueError: no such pod list")
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("y")  # refused: nothing can be applied, and it says so
        await until(pilot, lambda: any("refused the dry run" in n for n in notes),
                    why=lambda: notes)
        assert app.screen is dialog and not dialog.applying and app.is_running
    assert (tmp_path / "audit.jsonl").read_text() == ""


async def test_sigterm_stops_a_background_drain_without_asking(
        live_app: Any, tmp_path: Path) -> None:
    """The way out a signal takes (the exit guard) stops background operations too, at
    once, and their outcome line says by what."""
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        await start_drain(pilot, app)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is screen)
        (op,) = app.operations.running()
        app.exit_guard.begin("SIGTERM", 143)  # what the signal handler does
        await pilot.pause()
        assert not isinstance(app.screen, AskScreen)
    assert poll(lambda: audit_lines(tmp_path)[-1]["phase"] == "outcome")
    outcome = audit_lines(tmp_path)[-1]
    assert outcome["id"] == op.id and outcome["interrupted"] == "SIGTERM"
    assert app.operations.get(op.id).state is OpState.INTERRUPTED  # type: ignore[union-attr]
    assert app.return_code == 143
