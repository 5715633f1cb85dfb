"""The audit log: an intent line before the first write, an outcome line after it.

Why two lines, and why the first one is fsync'd before anything is sent: after an incident
someone asks "who drained gpu-17, when, what exactly was sent, and did it finish?". A single
line written at the end is lost when gputui is killed mid-drain (``kill -9``, an OOM, a
power cut), which is when the question matters most. So :meth:`AuditLog.intent` writes
``{"id", "time", "phase": "intent", "context", "cluster", "user", "user_source", "action",
"targets", "change", "params", "dry_run"}`` and flushes it to disk; if that fails, the caller
sends nothing. ``cluster`` (``{"server", "uid"}``: the server URL without userinfo and the
``kube-system`` namespace UID) is what tells this cluster's lines from those of another
behind the same context name (:mod:`gputui.domain.cluster_id`). :meth:`AuditLog.outcome`
closes it with the same ``id``: ``{"id", "time", "phase": "outcome", "result", "error",
"done", "interrupted"}``.

The file is opened per line with :func:`gputui.privatefile.open_private` (no symlink
followed, a regular file owned by the user, mode 0600 before the first byte, its directory
0700). Values under keys that look like credentials are replaced before writing, and JSON's
escaping keeps any control character a cluster string holds out of the file as raw bytes.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gputui.actions.base import Change, Plan, Result
from gputui.domain.cluster_id import ClusterId
from gputui.privatefile import PrivateFileError, open_private, sync_directory, write_all
from gputui.sources.secrets import scrub

_SECRET_KEYS = ("token", "password", "secret", "authorization", "client-key", "client_key",
                "bearer", "credential")
REDACTED = "[redacted]"
#: how the audit log names itself in every sentence it raises
WHAT = "the audit log"
#: ``user_source`` values: the API server said who we are, or the kubeconfig entry's name
FROM_SERVER = "server"
FROM_KUBECONFIG = "kubeconfig"


class AuditError(Exception):
    """A line could not be written; ``str()`` is one sentence saying why."""


@dataclass(frozen=True)
class Identity:
    """Who the audit log says acted: the name and where it came from (``user_source``)."""

    user: str
    source: str = FROM_KUBECONFIG


def change_record(change: Change) -> dict[str, Any]:
    """One write as the audit log keeps it."""
    record: dict[str, Any] = {"verb": change.verb, "kind": change.kind, "name": change.name,
                              "body": redact(change.body), "kubectl": change.kubectl}
    if change.namespace:
        record["namespace"] = change.namespace
    if change.verb == "patch":
        record["patch_type"] = change.patch_type
    if change.resource_version:
        record["resource_version"] = change.resource_version
    return record


def redact(value: Any) -> Any:
    """``value`` with every credential-looking key's value replaced."""
    if isinstance(value, Mapping):
        return {str(k): (REDACTED if any(s in str(k).lower() for s in _SECRET_KEYS)
                         else redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def new_id(now: float) -> str:
    """A UUIDv7 (RFC 9562): unique, and sorting by it sorts by time (milliseconds)."""
    millis = int(now * 1000) & ((1 << 48) - 1)
    rand = secrets.randbits(74)
    value = ((millis << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62)
             | (rand & ((1 << 62) - 1)))
    return str(uuid.UUID(int=value))


def rfc3339(now: float) -> str:
    """UTC with milliseconds: two lines of one drain are usually within the same second."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


class AuditLog:
    """Appends intent and outcome lines to ``path``; thread-safe.

    Args:
        path: the file (``~`` expanded); created 0600 in a 0700 directory.
        clock: seconds since the epoch (tests freeze it).
    """

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time):
        self.path = Path(path).expanduser()
        self._clock = clock
        self._lock = threading.Lock()

    def check(self) -> str | None:
        """Why the log cannot be written (one sentence), or None; creates it when missing.

        Called at start so that a bad path disables actions before any is offered, not
        after one has been applied.
        """
        try:
            with self._lock:
                os.close(self._open())
        except AuditError as error:
            return str(error)
        return None

    def intent(self, *, context: str, identity: Identity, plan: Plan,
               dry_run: str, audit_id: str | None = None,
               cluster: ClusterId | None = None) -> str:
        """Write and fsync the intent line for ``plan``; returns its id (``audit_id`` when
        given: an operation's id is made before its intent line, see ``operations.py``).
        ``cluster``: the cluster the writes go to (the runner always gives it; a line
        without one is no cluster's in the summary).

        Raises:
            AuditError: the line is not on disk; the caller must send nothing.
        """
        now = self._clock()
        audit_id = audit_id or new_id(now)
        self._append({
            "id": audit_id, "time": rfc3339(now), "phase": "intent", "context": context,
            **({"cluster": cluster.to_json()} if cluster is not None else {}),
            "user": identity.user, "user_source": identity.source, "action": plan.action_id,
            "targets": list(plan.targets), "change": [change_record(c) for c in plan.changes],
            "params": redact(dict(plan.params)), "dry_run": dry_run})
        return audit_id

    def outcome(self, audit_id: str, *, result: Result, done: Sequence[Mapping[str, Any]],
                interrupted: str | None) -> None:
        """Write and fsync the outcome line of intent ``audit_id``.

        Raises:
            AuditError: the line could not be written (the change may have been applied:
                the caller says so, it must not crash).
        """
        self._append({
            "id": audit_id, "time": rfc3339(self._clock()), "phase": "outcome",
            "result": result_text(result), "error": result.error,
            "done": [redact(dict(entry)) for entry in done], "interrupted": interrupted})

    def _append(self, entry: Mapping[str, Any]) -> None:
        # scrub: an error's text may quote a credential gputui loaded
        line = scrub(json.dumps(entry, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            fd = self._open()
            try:
                created = os.fstat(fd).st_size == 0
                write_all(fd, line)
                os.fsync(fd)
            except OSError as error:
                raise AuditError(f"cannot write {WHAT} {self.path}: "
                                 f"{error.strerror or error}") from None
            finally:
                os.close(fd)
        if created:  # the new file's directory entry must survive a crash too
            sync_directory(self.path.parent)

    def _open(self) -> int:
        try:
            return open_private(self.path, WHAT, private_dir=True)
        except PrivateFileError as error:
            raise AuditError(str(error)) from None


def result_text(result: Result) -> str:
    """``ok: ...``, ``failed: ...`` or ``cancelled: ...`` with the result's summary."""
    if result.cancelled:
        return "cancelled: " + result.summary
    return ("ok: " if result.ok else "failed: ") + result.summary
