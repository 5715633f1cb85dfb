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


def after_loop_turn(pump: MessagePump, callback: Callable[[], Any]) -> None:
    """Call ``callback`` on ``pump`` once the loop has run everything else that is ready."""
    asyncio.get_running_loop().call_soon(pump.call_later, callback)


class LatestOnly:
    """Hands ``apply`` only the newest of values offered faster than it can run.

    Why: a filter typed (or pasted) into the node list at 5,000 nodes re-filtered every row
    once per character, 60-130 ms each, so a 30-character name took 3 s to show. Offered
    values wait for the next screen refresh (the keys already queued are handled first);
    the newest is applied once.
    """

    def __init__(self, pump: MessagePump, apply: Callable[[Any], Any]) -> None:
        self._pump, self._apply = pump, apply
        self._value: Any = None
        self._queued = False

    def offer(self, value: Any) -> None:
        """Apply ``value`` after the next refresh, unless a newer one comes first."""
        self._value = value
        if not self._queued:
            self._queued = True
            self._pump.call_after_refresh(self._run)

    def drop(self) -> None:
        """Forget a value still waiting (the prompt was cleared)."""
        self._queued = False

    def flush(self) -> None:
        """Apply a value still waiting now (the prompt was submitted)."""
        if self._queued:
            self._run()

    def _run(self) -> None:
        if self._queued:
            self._queued = False
            self._apply(self._value)
