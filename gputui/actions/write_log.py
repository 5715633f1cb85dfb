"""The write log: what an apply actually did to the cluster (the audit outcome line's ``done``).

Why record at the writer rather than trust each action's summary: a drain evicts pods its
plan never listed (the apply lists the node's pods fresh), the MIG safe path cordons,
waits and relabels, and an action stopped halfway reports in words. For a postmortem the
exact writes matter: which node was cordoned, which pods were evicted, at what time. So the
runner hands the action a :class:`WriteLog`; every write the server accepted (dry
runs excluded) is kept, and a write whose answer never came (a timeout, a cut connection:
it may have landed) is kept marked ``unconfirmed``. Every method of the writer is written
out here, none reached through ``__getattr__``: a write the record does not know about
cannot pass through unrecorded (a test compares the two).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from gputui.actions.audit import rfc3339
from gputui.actions.base import Change, ClusterWriter, JsonObj, Permission, WriteError
from gputui.actions.guard import read_log
from gputui.sources.identity import ServerIdentity

#: how the writer words a refusal it made itself, before sending anything
_LOCAL_REFUSALS = ("read-only mode", "gputui ", "unknown patch type")


class WriteLog:
    """A :class:`~gputui.actions.base.ClusterWriter` that passes every call to ``writer``
    and keeps the writes that were done (see the module docstring)."""

    def __init__(self, writer: ClusterWriter, clock: Callable[[], float] = time.time):
        self._writer = writer
        self._clock = clock
        self._lock = threading.Lock()
        self._done: list[dict[str, Any]] = []
        #: writes sent and not yet answered, by a sequence number
        self._out: dict[int, dict[str, Any]] = {}
        self._sequence = 0
        self.context = writer.context
        self.user = writer.user
        self.read_only = writer.read_only
        self.server = getattr(writer, "server", "")  # a test's writer may name none

    @property
    def done(self) -> tuple[dict[str, Any], ...]:
        """The writes done so far, in the order they were answered, then the writes still
        out (sent, no answer yet: the runner's guard abandoned them at a stop or a deadline;
        they may land), marked ``unconfirmed``."""
        with self._lock:
            out = tuple({**record, "unconfirmed": "no answer when the action ended"}
                        for record in self._out.values())
            return (*self._done, *out)

    def patch(self, change: Change, *args: Any, dry_run: bool = False,
              **kwargs: Any) -> JsonObj:
        record = {"verb": "patch", "kind": change.kind, "name": change.name,
                  **({"namespace": change.namespace} if change.namespace else {}),
                  "summary": change.summary}
        answer: JsonObj = self._sent(
            record, dry_run, lambda: self._writer.patch(change, *args, dry_run=dry_run, **kwargs))
        return answer

    def evict(self, namespace: str, pod: str, *args: Any, dry_run: bool = False,
              **kwargs: Any) -> None:
        record = {"verb": "create", "kind": "Pod", "subresource": "eviction",
                  "namespace": namespace, "name": pod}
        self._sent(record, dry_run,
                   lambda: self._writer.evict(namespace, pod, *args, dry_run=dry_run,
                                              **kwargs))

    def get(self, kind: str, name: str, namespace: str | None = None) -> JsonObj:
        return self._writer.get(kind, name, namespace)

    def list_pods_on_node(self, node: str, label_selector: str = "") -> list[JsonObj]:
        return self._writer.list_pods_on_node(node, label_selector)

    def can_i(self, permission: Permission) -> tuple[bool, str]:
        return self._writer.can_i(permission)

    def who_am_i(self) -> ServerIdentity | None:
        return self._writer.who_am_i()

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
        return read_log(self._writer, namespace, pod, container, tail_lines)

    def _sent(self, record: dict[str, Any], dry_run: bool, send: Callable[[], Any]) -> Any:
        """Send; keep ``record`` when the server accepted it (or may have, unanswered)."""
        if dry_run:
            return send()
        with self._lock:
            self._sequence += 1
            ticket = self._sequence
            self._out[ticket] = {**record, "time": rfc3339(self._clock())}
        try:
            answer = send()
        except WriteError as error:
            self._answered(ticket)
            if error.status == 0 and not error.reason.startswith(_LOCAL_REFUSALS):
                self._keep({**record, "unconfirmed": error.reason})
            raise
        except BaseException:
            self._answered(ticket)
            raise
        self._answered(ticket)
        self._keep(record)
        return answer

    def _answered(self, ticket: int) -> None:
        with self._lock:
            self._out.pop(ticket, None)

    def _keep(self, record: dict[str, Any]) -> None:
        stamped = {**record, "time": rfc3339(self._clock())}
        with self._lock:
            self._done.append(stamped)
