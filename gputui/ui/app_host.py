"""``AppSurface``: the part of Textual's ``App`` that gputui's flows call, as a protocol.

Why: the flows (commands, actions, operations, timeline, summary, pod logs, the replay's
keys) are plain objects the app holds, each given the app as its *host*. Typing the host as
the app class would import the app into every flow and the flows into the app (a circle);
typing it as ``App`` would hide which of the app's own attributes a flow borrows. So each
flow declares a host protocol that extends this one with what it reads of gputui's app
(the session, the snapshot, the clock...), and a test's fake host implements only that.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from textual.screen import Screen
from textual.worker import Worker
from textual.worker_manager import WorkerManager


class AppSurface(Protocol):
    """Textual ``App`` methods and properties the flows use (signatures as Textual 8.2)."""

    @property
    def screen(self) -> Screen[Any]: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    @property
    def workers(self) -> WorkerManager: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def push_screen(self, screen: Any, callback: Any = None,
                    wait_for_dismiss: bool = False) -> Any: ...

    def push_screen_wait(self, screen: Any) -> Awaitable[Any]: ...

    def pop_screen(self) -> Any: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any,
                         **kwargs: Any) -> Any: ...

    def run_worker(self, work: Any, name: str | None = "", group: str = "default",
                   description: str = "", exit_on_error: bool = True, start: bool = True,
                   exclusive: bool = False, thread: bool = False) -> Worker[Any]: ...

    def refresh_bindings(self) -> None: ...
