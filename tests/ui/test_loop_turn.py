"""Slices of work queued with ``after_loop_turn`` let other tasks (the app's keys) run
between them; slices queued with ``call_later`` would run as one block."""

from __future__ import annotations

import asyncio

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
