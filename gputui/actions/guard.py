"""Every request an action sends, stopped by its cancel and bounded by its deadline.

Why: the writer's requests wait up to 30 s for a silent server, and an action checked its
cancel only between requests, so a hung API server made escape take 30 s and a drain overrun
its timeout by 30 s per pod; SIGTERM mid-drain let 25 more evictions out. The
:class:`GuardedWriter` the runner hands to every apply fixes both where they happen:

* nothing is sent once the cancel is set (:class:`WriteInterrupted`, before the request);
* each request runs in its own daemon thread while the action's thread polls the cancel
  every :data:`POLL` seconds: a stop answers at once, the request in flight is abandoned
  (it may still land: the server got it, nothing can unsend it);
* with a deadline (:func:`write_deadline`), each request's socket timeouts are cut to the
  time left (:mod:`gputui.sources.budget`), a request after the deadline is not sent, and a
  request still unanswered :data:`GRACE` seconds after it is abandoned.

Every request method of the writer is written out here (:data:`REQUESTS`), none reached by
falling through to the real writer: a new one added to the writer and not here is missing
from the guarded writer (and a test comparing the two fails), rather than sent unguarded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Protocol, TypeVar, runtime_checkable

from gputui.actions.base import Change, ClusterWriter, Permission, Result, WriteError
from gputui.sources.budget import request_budget
from gputui.sources.identity import ServerIdentity

#: seconds between two looks at the cancel while a request is out
POLL = 0.1
#: seconds past the deadline an unanswered request is given before it is abandoned
GRACE = 1.0

T = TypeVar("T")
JsonObj = dict[str, Any]

#: the writer's requests (:class:`~gputui.sources.writer.KubeWriter`'s public methods), each
#: one guarded by :class:`GuardedWriter`
REQUESTS = frozenset({"patch", "evict", "get", "list_pods_on_node", "read_log", "can_i",
                      "who_am_i"})
#: the writer's public methods an action is not given: the runner's own
NOT_FOR_ACTIONS = frozenset({"close"})


@runtime_checkable
class LogReader(Protocol):
    """A writer that can also read a container's log tail (the MIG manager's, on failure)."""

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
        ...


def read_log(writer: object, namespace: str, pod: str, container: str | None = None,
             tail_lines: int = 200) -> list[str]:
    """``writer``'s :meth:`LogReader.read_log`; a writer that reads no logs (a test's) says
    so as a refusal made before sending anything."""
    if not isinstance(writer, LogReader):
        raise WriteError(0, "gputui cannot read logs through this connection")
    return writer.read_log(namespace, pod, container, tail_lines)


class WriteInterrupted(WriteError):
    """The action was stopped: the request was not sent, or its answer is not awaited."""

    def __init__(self, reason: str, interrupted: str):
        super().__init__(0, reason)
        #: what stopped it (:attr:`Cancel.reason`)
        self.interrupted = interrupted


class TimeUp(WriteError):
    """The time allowed was up before the request: it was not sent. Not the server's doing
    nor the object's: a loop keeps what it learnt of each object before (a budget's
    refusal) rather than reading this as the object's failure."""

    def __init__(self, what: str):
        super().__init__(0, f"the time allowed is up: {what} not sent")


def stop_reason(cancel: threading.Event) -> str | None:
    """What stopped the action (``esc``, ``quit``, ``SIGTERM``...), None while it runs.

    A bare :class:`threading.Event` (tests, older callers) that is set reads as ``stopped``.
    """
    if not cancel.is_set():
        return None
    return getattr(cancel, "reason", None) or "stopped"


def mark_interrupted(result: Result, cancel: threading.Event) -> Result:
    """``result`` with ``cancelled`` and ``interrupted`` set when the cancel ended it early.

    An action that ran to success before the stop was seen keeps its result as it is.
    """
    reason = stop_reason(cancel)
    if reason is None or result.ok or (result.cancelled and result.interrupted):
        return result
    return replace(result, cancelled=True, interrupted=reason)


class GuardedWriter:
    """A :class:`ClusterWriter` that stops with ``cancel`` and keeps to a deadline.

    Only what is written here is offered: no ``__getattr__`` passes a request the guard does
    not know through to the real writer (see the module docstring).
    """

    def __init__(self, inner: ClusterWriter, cancel: threading.Event):
        self.inner = inner
        self.cancel = cancel
        self.context = inner.context
        self.user = inner.user
        self.read_only = inner.read_only
        self.server = getattr(inner, "server", "")  # a test's writer may name none
        #: :func:`time.monotonic` time after which nothing is sent; None for no deadline
        self.deadline: float | None = None

    # ----------------------------------------------------------- ClusterWriter
    def patch(self, change: Change, *, dry_run: bool = False) -> JsonObj:
        return self._send(f"patch {change.kind} {change.name}",
                          lambda: self.inner.patch(change, dry_run=dry_run))

    def evict(self, namespace: str, pod: str, *, dry_run: bool = False) -> None:
        self._send(f"eviction of {namespace}/{pod}",
                   lambda: self.inner.evict(namespace, pod, dry_run=dry_run))

    def get(self, kind: str, name: str, namespace: str | None = None) -> JsonObj:
        return self._send(f"read of {kind} {name}",
                          lambda: self.inner.get(kind, name, namespace))

    def list_pods_on_node(self, node: str, label_selector: str = "") -> list[JsonObj]:
        return self._send(f"list of the pods on {node}",
                          lambda: self.inner.list_pods_on_node(node, label_selector))

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
        return self._send(f"read of the log of {namespace}/{pod}",
                          lambda: read_log(self.inner, namespace, pod, container, tail_lines))

    def can_i(self, permission: Permission) -> tuple[bool, str]:
        return self._send(f"review of {permission.describe()}",
                          lambda: self.inner.can_i(permission))

    def who_am_i(self) -> ServerIdentity | None:
        return self._send("SelfSubjectReview", self.inner.who_am_i)

    # --------------------------------------------------------------- internals
    def _left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _send(self, what: str, call: Callable[[], T]) -> T:
        """Run ``call`` in a daemon thread; answer its result, or stop waiting for it."""
        reason = stop_reason(self.cancel)
        if reason is not None:
            raise WriteInterrupted(f"stopped ({reason}): {what} not sent", reason)
        left = self._left()
        if left is not None and left <= 0:
            raise TimeUp(what)  # gputui's own limit, not the server's fault: on a loaded
            # machine it is spent before a send
        outcome: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                with request_budget(left):
                    outcome.append((True, call()))
            except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
                outcome.append((False, error))
            finally:
                done.set()

        threading.Thread(target=run, name="gputui-write", daemon=True).start()
        self._wait(done, what)
        sent_ok, value = outcome[0]
        if not sent_ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _wait(self, done: threading.Event, what: str) -> None:
        """Until the request answers; raise when the cancel is set or the deadline passes."""
        while not done.wait(POLL):
            reason = stop_reason(self.cancel)
            if reason is not None:
                raise WriteInterrupted(f"stopped ({reason}) while waiting for the server: "
                                       f"{what} may still land", reason)
            left = self._left()
            if left is not None and left < -GRACE:
                raise WriteError(0, f"no answer from the API server to the {what} before "
                                    "the time allowed was up")


def guarded(writer: ClusterWriter, cancel: threading.Event) -> GuardedWriter:
    """The writer an apply gets: ``writer`` stopped by ``cancel``."""
    return writer if isinstance(writer, GuardedWriter) else GuardedWriter(writer, cancel)


@contextmanager
def write_deadline(writer: ClusterWriter, seconds: float) -> Iterator[None]:
    """Inside the block, ``writer``'s requests end within ``seconds`` from now (+ GRACE).

    A no-op for a writer that is not guarded (a test's fake); an earlier deadline set around
    this one (a MIG safe path's) is kept when it comes first, and restored after.
    """
    if not isinstance(writer, GuardedWriter):
        yield
        return
    previous = writer.deadline
    mine = time.monotonic() + seconds
    writer.deadline = mine if previous is None else min(previous, mine)
    try:
        yield
    finally:
        writer.deadline = previous
