"""Type-ahead: keys typed in a burst are dispatched one by one, each after the last one landed.

Why: over SSH keys arrive in bursts. Textual dispatches each key as soon as the app reads it,
but what a key starts often lands later: ``:`` pushes the command line, whose input is
composed, mounted and focused over the next few turns of the event loop (``Widget.focus`` is
itself deferred); ``/`` focuses the filter prompt the same way; Enter in a prompt dismisses it
and the app then switches view. Keys dispatched meanwhile went to whatever had focus before
(the node table, where ``u`` means uncordon) or to a screen not yet mounted, and were lost:
``:upgrades⏎`` typed in one go left the node list on screen.

So the app hands every key to :class:`TypeAhead`. A key is dispatched only when the previous
one has *settled*: the widget it went to, and that widget again (for the messages it posted
to itself, such as ``Input.Submitted``), then the screen (where those messages bubble), then
the app (deferred focus changes and screen-result callbacks) have each processed what was
queued, and the active screen is mounted. Keys arriving meanwhile wait in order. The app may
also hold keys for a multi-step command (:meth:`begin` / :meth:`end`). Generic by design:
every screen and dialog (the confirmation dialog included) gets it without code of its own.
A hop that does not come back in :data:`HOP_TIMEOUT` seconds is not waited for, so a screen
that never mounts cannot swallow the keyboard.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from textual import events
from textual.app import App
from textual.message_pump import MessagePump

#: seconds one hop may take before the next key goes anyway
HOP_TIMEOUT = 1.0
#: hops spent waiting for a newly pushed screen to mount
MOUNT_HOPS = 20

Dispatch = Callable[[events.Key], Awaitable[None]]


async def hop(pump: MessagePump, timeout: float = HOP_TIMEOUT) -> None:
    """Return once ``pump`` has processed everything queued before this call."""
    done = asyncio.Event()
    if not pump.call_later(done.set):
        return  # closed or closing: nothing more will land there
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except TimeoutError:
        pass


class TypeAhead:
    """Orders keys behind the effects of earlier ones (see the module docstring).

    Args:
        app: the app (its ``focused``, ``screen`` and message queue are watched).
        dispatch: Textual's own key handling (``App.on_event``), called for each key.
    """

    def __init__(self, app: App[Any], dispatch: Dispatch) -> None:
        self.app = app
        self._dispatch = dispatch
        self.held: deque[events.Key] = deque()
        self._holds = 0
        self._settling: asyncio.Task[None] | None = None
        #: keys that had to wait (tests and the debug view read it)
        self.delayed = 0

    @property
    def busy(self) -> bool:
        return self._holds > 0 or (self._settling is not None and not self._settling.done())

    async def key(self, event: events.Key) -> None:
        """A key read from the terminal: dispatch it now, or queue it behind the others."""
        if self.busy or self.held:
            self.held.append(event)
            self.delayed += 1
            return
        await self._send(event)

    def begin(self) -> None:
        """Hold keys until :meth:`end` (a command that takes several turns of the loop)."""
        self._holds += 1

    def end(self) -> None:
        self._holds = max(0, self._holds - 1)
        if not self._holds:
            self._settle_later()

    def cancel(self) -> None:
        """The app is closing: drop the pending settle and the keys waiting on it."""
        if self._settling is not None:
            self._settling.cancel()
        self.held.clear()

    async def _send(self, event: events.Key) -> None:
        await self._dispatch(event)
        self._settle_later()

    def _settle_later(self) -> None:
        if self._settling is None or self._settling.done():
            self._settling = asyncio.ensure_future(self._settle())

    async def _settle(self) -> None:
        app = self.app
        target: MessagePump = app.focused or app.screen
        for pump in (target, target, app.screen, app):
            await hop(pump)
        for _ in range(MOUNT_HOPS):  # a pushed screen or a new mode: wait for its mount
            screen = app.screen
            if screen.is_mounted:
                break
            await hop(screen)
        await hop(app.screen)
        await hop(app)  # the focus changes the mount asked for
        if self.held and not self._holds:
            app.call_later(self._release)

    async def _release(self) -> None:
        """Dispatch the oldest waiting key (in the app's loop, like any key)."""
        if self.busy or not self.held:
            return
        await self._send(self.held.popleft())
