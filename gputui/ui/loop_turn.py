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
