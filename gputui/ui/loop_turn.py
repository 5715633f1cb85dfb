"""``after_loop_turn``: run a widget's next slice of work only after the event loop's turn.

Why: a Textual message pump handles the messages in its queue one after another without
returning to the asyncio loop while the queue is not empty. Work cut into slices that each
queue the next with ``call_later`` therefore runs as one block: 100 slices of a 5,000-row
fill kept every key press (handled by the app's pump, another task) waiting 2-6 s. Queued
from ``loop.call_soon`` instead, the next slice is posted after every ready task (the
app's keys, the screen's refresh) had its turn, so a key waits for one slice at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.message_pump import MessagePump
from textual.timer import Timer


def after_loop_turn(pump: MessagePump, callback: Callable[[], Any]) -> None:
    """Call ``callback`` on ``pump`` once the loop has run everything else that is ready."""
    asyncio.get_running_loop().call_soon(pump.call_later, callback)


class LatestOnly:
    """Hands ``apply`` only the newest of values offered faster than it can run.

    Why: a filter typed (or pasted) into the node list at 5,000 nodes re-filtered every row
    once per character, 60-130 ms each, so a 30-character name took 3 s to show. A value
    is applied once no newer one came for :data:`QUIET` seconds: a pasted or fast-typed
    line is applied once, a person typing sees each key's result within a frame or two.
    """

    #: seconds without a newer value before the newest is applied
    QUIET = 0.04

    def __init__(self, pump: MessagePump, apply: Callable[[Any], Any]) -> None:
        self._pump, self._apply = pump, apply
        self._value: Any = None
        self._timer: Timer | None = None

    def offer(self, value: Any) -> None:
        """Apply ``value`` once nothing newer came for :data:`QUIET` seconds."""
        self._value = value
        if self._timer is not None:
            self._timer.stop()
        self._timer = self._pump.set_timer(self.QUIET, self._run)

    def drop(self) -> None:
        """Forget a value still waiting (the prompt was cleared)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def flush(self) -> None:
        """Apply a value still waiting now (the prompt was submitted)."""
        if self._timer is not None:
            self._timer.stop()
            self._run()

    def _run(self) -> None:
        """(the timer, or :meth:`flush`) Apply the newest value, once."""
        if self._timer is not None:
            self._timer = None
            self._apply(self._value)
