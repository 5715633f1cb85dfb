"""Slices of work queued with ``after_loop_turn`` let other tasks (the app's keys) run
between them; slices queued with ``call_later`` would run as one block."""

from __future__ import annotations

import asyncio
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from gputui.ui.loop_turn import after_loop_turn
from tests.ui.helpers import until

SLICES = 30


class Chain(Static):
    """Runs ``SLICES`` slices, each queuing the next the way the node table does."""

    def __init__(self, via_loop: bool) -> None:
        super().__init__()
        self.via_loop = via_loop
        self.log_: list[str] = []

    def start(self) -> None:
        self._slice(0)

    def _slice(self, index: int) -> None:
        self.log_.append("slice")
        if index + 1 < SLICES:
            if self.via_loop:
                after_loop_turn(self, lambda: self._slice(index + 1))
            else:
                self.call_later(self._slice, index + 1)


class ChainApp(App[None]):
    def __init__(self, via_loop: bool) -> None:
        super().__init__()
        self.chain = Chain(via_loop)

    def compose(self) -> ComposeResult:
        yield self.chain


async def _interleavings(via_loop: bool) -> int:
    """How many times another task ran while the chain was going."""
    app = ChainApp(via_loop)
    async with app.run_test() as pilot:
        chain = app.chain
        stop = asyncio.Event()

        async def other_task() -> None:
            while not stop.is_set():
                chain.log_.append("other")
                await asyncio.sleep(0)  # window: one loop turn, what this test counts

        task = asyncio.get_running_loop().create_task(other_task())
        await asyncio.sleep(0)  # window: one loop turn, so the task is running
        chain.start()
        await until(pilot, lambda: chain.log_.count("slice") >= SLICES)
        stop.set()
        await task
    first, last = chain.log_.index("slice"), len(chain.log_) - chain.log_[::-1].index("slice")
    return chain.log_[first:last].count("other")


async def test_other_tasks_run_between_slices() -> None:
    assert await _interleavings(via_loop=True) >= SLICES - 1


async def test_a_call_later_chain_would_run_as_one_block() -> None:
    """Why the helper exists: the pump drains its queue without yielding."""
    assert await _interleavings(via_loop=False) < SLICES // 2


async def test_latest_only_applies_the_newest_of_a_burst_once() -> None:
    from gputui.ui.loop_turn import LatestOnly

    app = ChainApp(via_loop=True)
    applied: list[str] = []
    async with app.run_test() as pilot:
        latest = LatestOnly(app.chain, applied.append)
        for text in ("g", "gk", "gke", "gke-1"):  # a pasted or fast-typed filter
            latest.offer(text)
        await until(pilot, lambda: bool(applied))
        await pilot.pause()
        assert applied == ["gke-1"]
        latest.offer("abc")
        latest.drop()  # cleared before it was applied: never applied
        latest.offer("x")
        latest.flush()  # submitted: applied now, and not again after the refresh
        await pilot.pause()
        await pilot.pause()
        assert applied == ["gke-1", "x"]


async def test_a_filter_pasted_into_the_node_list_is_applied_once(frozen_app: Any) -> None:
    from gputui.ui.widgets.node_table import NodeTable
    from tests.ui.conftest import settle

    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        name = table.shown_nodes[-1]
        filters: list[str] = []
        set_filter = table.set_filter
        table.set_filter = lambda f: (filters.append(f.text), set_filter(f))[1]  # type: ignore[method-assign]
        await pilot.press("slash")
        for char in name:  # a paste: every key in the queue at once (Pilot waits per key)
            app.post_message(events.Key("minus" if char == "-" else char, char))
        # the last text, not just a list of one: on a loaded machine a prefix typed
        # before the paste's end can be applied (it may show that node alone already)
        await until(pilot, lambda: table.node_filter.text == name
                    and table.shown_nodes == [name], why=lambda: f"filters applied: {filters}")
        assert len(filters) < len(name) // 2 and filters[-1] == name
