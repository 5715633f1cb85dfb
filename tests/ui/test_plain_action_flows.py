"""The command, action and operation flows as plain objects, tested without an App (issue 28).

Each flow takes its host in the constructor; a fake host records what the flow asked of it
(notifications, screens pushed, workers started, mode switches), so each rule of a flow is
checked on its own. The flows' work with a real app and server is in test_actions.py,
test_operations.py and the journeys.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from gputui.actions.base import Cancel, Plan, Result
from gputui.actions.registry import action
from gputui.actions.runner import DryRun
from gputui.domain.model import EMPTY_SNAPSHOT
from gputui.ui.action_flow import NO_RUNNER, ActionFlow
from gputui.ui.command_flow import CommandFlow
from gputui.ui.contracts import OperationChanged
from gputui.ui.exit_signals import ExitGuard
from gputui.ui.operations_flow import OperationsFlow
from gputui.ui.screens.ask import AskScreen
from gputui.ui.selection import Selection


class FakeScreen:
    """A screen whose node tables record the busy nodes they are shown."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.busy: list[frozenset[str]] = []

    def query(self, _kind: object) -> list[Any]:
        return [SimpleNamespace(show_busy=self.busy.append)]


class FakeHost:
    """The App surface the flows use, recording every call."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.pushed: list[Any] = []
        self.posted: list[Any] = []
        self.workers_started: list[dict[str, Any]] = []
        self.later: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.header_refreshes = 0
        self.stack: list[Any] = [FakeScreen("nodes view")]
        self.clock = lambda: 1_000.0
        self.exit_guard = ExitGuard(lambda code: None, lambda: None, lambda: None)
        self.timeline_told: list[tuple[str, bool]] = []
        self.timelines = SimpleNamespace(
            operation_changed=lambda op_id, ended: self.timeline_told.append((op_id, ended)))
        self.snapshot = replace(EMPTY_SNAPSHOT, loading=frozenset())
        self.session = SimpleNamespace(runner=None, replay=None)

    @property
    def screen(self) -> Any:
        return self.stack[-1]

    @property
    def screen_stack(self) -> list[Any]:
        return self.stack

    def notify(self, message: str, **_how: Any) -> None:
        self.said.append(message)

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False) -> None:
        self.pushed.append(screen)

    def pop_screen(self) -> None:
        self.stack.pop()

    def post_message(self, message: Any) -> bool:
        self.posted.append(message)
        return True

    def run_worker(self, work: Any, **how: Any) -> None:
        if asyncio.iscoroutine(work):
            work.close()  # the worker itself is Textual's; what was asked is what counts
        self.workers_started.append(how)

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool:
        self.later.append((callback, args))
        return True

    def refresh_header(self) -> None:
        self.header_refreshes += 1

    def refresh_bindings(self) -> None:
        pass


# ---------------------------------------------------------------------- operations
def _cordon(flow: OperationsFlow, node: str = "gpu-1") -> Any:
    plan = Plan("cordon", f"Cordon {node}", (node,))
    return flow.operations.begin(plan, DryRun(), Cancel(), action("cordon"))


def test_an_operation_is_posted_from_any_thread_and_its_end_announced_once() -> None:
    host = FakeHost()
    flow = OperationsFlow(host)  # type: ignore[arg-type]
    op = _cordon(flow)
    assert [type(m) for m in host.posted] == [OperationChanged]  # a message, nothing else
    flow.changed(host.posted[-1].operation)
    assert host.screen.busy == [frozenset({"gpu-1"})] and host.said == []  # ⟳ on its row
    flow.operations.finished(op.id, Result(True, "cordoned gpu-1"))
    ended = host.posted[-1].operation
    flow.changed(ended)
    flow.changed(ended)  # the same end delivered twice (a reopened dialog, a late message)
    assert host.said == ["cordoned gpu-1"] and host.screen.busy[-1] == frozenset()
    assert host.timeline_told[-1] == (op.id, True) and host.header_refreshes == 3


def test_nothing_is_posted_once_the_app_is_leaving() -> None:
    host = FakeHost()
    flow = OperationsFlow(host)  # type: ignore[arg-type]
    host.exit_guard.reason = "quit"  # the loop may be gone: nobody is shown it
    _cordon(flow)
    assert host.posted == []


def test_quitting_asks_first_only_while_an_operation_runs() -> None:
    host = FakeHost()
    flow = OperationsFlow(host)  # type: ignore[arg-type]
    assert flow.ask_quit() is False and host.pushed == []
    op = _cordon(flow)
    assert flow.ask_quit() is True
    (asked,) = host.pushed
    assert isinstance(asked, AskScreen) and "1 operation running" in asked.question
    host.stack.append(asked)
    assert flow.ask_quit() is True and len(host.pushed) == 1  # already asking: not twice
    flow.operations.finished(op.id, Result(True, "cordoned gpu-1"))
    assert flow.ask_quit() is False


# ---------------------------------------------------------------------- actions
class Runner:
    """A runner that greys nothing (planning itself is tested through the real one)."""

    def blocked(self, _act: Any) -> str | None:
        return None


def _actions(runner: Any = None) -> tuple[FakeHost, ActionFlow]:
    host = FakeHost()
    host.session.runner = runner
    return host, ActionFlow(host, OperationsFlow(host))  # type: ignore[arg-type]


def test_without_a_runner_every_action_is_refused_with_the_reason_and_nothing_starts() -> None:
    host, flow = _actions()
    assert set(flow.blocks().values()) == {NO_RUNNER}
    flow.start("cordon", ["gpu-1"])
    assert host.said == [f"Cordon is not available: {NO_RUNNER}"]
    assert host.workers_started == []
    # a greyed key is answered (Textual would drop it without a word), not run by Textual
    assert flow.answered_at_once("act('cordon')") is True and len(host.said) == 2


def test_an_action_waits_for_the_lists_and_needs_a_selection() -> None:
    host, flow = _actions(Runner())
    host.snapshot = replace(EMPTY_SNAPSHOT, loading=frozenset({"pods"}))
    flow.start("cordon", ["gpu-1"])
    assert "still reading pods" in host.said[-1]
    host.snapshot = replace(EMPTY_SNAPSHOT, loading=frozenset())
    flow.start("cordon", Selection(why_none="no node under the cursor"))
    assert host.said[-1] == "Cordon: no node under the cursor; nothing was sent"
    assert host.workers_started == []
    flow.start("cordon", ["gpu-1"])
    (worker,) = host.workers_started
    assert worker["group"] == "action-flow" and worker["exclusive"] is True
    assert worker["exit_on_error"] is False
    assert flow.planning_failed("boom") == "Cordon: boom; nothing was sent"


class TaskWorker:
    """A worker that is an asyncio task (Textual's own is tested through the app)."""

    def __init__(self, work: Any, **_how: Any) -> None:
        self.task = asyncio.ensure_future(work)

    @property
    def is_finished(self) -> bool:
        return self.task.done()

    def cancel(self) -> None:
        self.task.cancel()

    async def ended(self) -> None:
        """Wait until the task has ended, however (returned, raised or cancelled)."""
        await asyncio.wait([self.task])


def task_workers(host: Any) -> list[TaskWorker]:
    """Make ``host`` run its workers as asyncio tasks; the list of those it started."""
    started: list[TaskWorker] = []

    def run_worker(work: Any, **how: Any) -> TaskWorker:
        started.append(TaskWorker(work, **how))
        return started[-1]

    host.run_worker = run_worker
    return started


async def test_whether_an_action_runs_has_one_answer_the_flow_and_its_registry() -> None:
    host, flow = _actions(Runner())
    assert not flow.open and not flow.busy
    workers = task_workers(host)
    gate = asyncio.Event()

    async def prompted(_act: Any, _targets: Any) -> None:
        await gate.wait()  # an open dialog

    flow._plan_and_confirm = prompted  # type: ignore[method-assign]
    flow.start("cordon", ["gpu-1"])
    assert flow.open and flow.busy  # a :ctx switch refuses now
    gate.set()
    await workers[-1].ended()  # the flow's worker ends
    assert not flow.open and not flow.busy
    op = _cordon(flow.operation_flow)  # `y`: an operation applies
    assert flow.busy and not flow.open  # a retired writer stays open until it ends
    flow.operations.finished(op.id, Result(True, "cordoned gpu-1"))
    assert not flow.busy


async def test_a_context_switch_closes_the_open_action_unsent() -> None:
    host, flow = _actions(Runner())
    workers = task_workers(host)
    reached: list[str] = []
    prompting = asyncio.Event()

    async def prompted(_act: Any, _targets: Any) -> None:
        prompting.set()
        await asyncio.Event().wait()
        reached.append("applied")  # never: the prompt was closed

    flow._plan_and_confirm = prompted  # type: ignore[method-assign]
    assert flow.close_open() is False  # nothing open
    flow.start("cordon", ["gpu-1"])
    await prompting.wait()  # the prompt is open (its task runs)
    assert flow.close_open() is True
    await workers[-1].ended()  # the cancel has landed
    assert workers[-1].task.cancelled()
    assert reached == [] and not flow.open and flow.close_open() is False


def test_the_selection_is_the_top_screen_s_never_the_node_list_under_it() -> None:
    host, flow = _actions(Runner())

    class Lanes:
        def selected_nodes(self) -> Selection:
            return Selection(("gpu-7",))

    host.stack = [Lanes(), SimpleNamespace(name="help")]
    assert flow.view_selection().nodes == ()
    assert "selects no node" in flow.view_selection().why_none
    host.stack.pop()
    assert flow.view_selection().nodes == ("gpu-7",)


# ---------------------------------------------------------------------- commands
class CommandHost(FakeHost):
    """A host with modes, a type-ahead and contexts."""

    def __init__(self) -> None:
        super().__init__()
        self.current_mode = "nodes"
        self.switched: list[str] = []
        self.typeahead = SimpleNamespace(begun=0, ended=0)
        self.typeahead.begin = lambda: setattr(self.typeahead, "begun", self.typeahead.begun + 1)
        self.typeahead.end = lambda: setattr(self.typeahead, "ended", self.typeahead.ended + 1)
        self.switch_to: list[str] = []
        self.contexts = SimpleNamespace(switch=self.switch_to.append, names=lambda: ())
        self.replay = None

    async def switch_mode(self, mode: str) -> None:
        self.switched.append(mode)
        self.current_mode = mode


async def _run_later(host: FakeHost) -> None:
    later, host.later = host.later, []
    for callback, args in later:
        await callback(*args)


async def test_a_typed_line_runs_by_alias_and_unknown_words_say_so() -> None:
    host = CommandHost()
    flow = CommandFlow(host)  # type: ignore[arg-type]
    flow.typed("nope")
    assert host.said == ["unknown command :nope (try :help)"] and host.later == []
    flow.typed("ctx lab-b")  # :ctx NAME switches directly
    await _run_later(host)
    assert host.switch_to == ["lab-b"]
    assert (host.typeahead.begun, host.typeahead.ended) == (1, 1)  # keys after Enter wait
    flow.typed("at 10:00")  # :at outside a replay: one line
    await _run_later(host)
    assert host.said[-1].startswith(":at: ")


async def test_switching_a_view_closes_pushed_screens_and_back_leaves_the_view() -> None:
    host = CommandHost()
    flow = CommandFlow(host)  # type: ignore[arg-type]
    host.stack.append(SimpleNamespace(name="a dialog"))
    await flow.switch_view("upgrades")
    assert len(host.stack) == 1 and host.switched == ["upgrades"]
    await flow.switch_view("upgrades")  # already there: no switch
    assert host.switched == ["upgrades"]
    await flow.back()
    assert host.switched == ["upgrades", "nodes"]


def test_no_flow_is_a_base_class_of_the_app() -> None:
    from gputui.ui.app import GpuTuiApp

    ours = [cls.__name__ for cls in GpuTuiApp.__mro__ if cls.__module__.startswith("gputui")]
    assert ours == ["GpuTuiApp", "QuietCrash"]  # the crash hook only; the flows are held
