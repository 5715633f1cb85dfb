"""The audit log: one JSON object per line for every applied or failed action.

Why a file and not only notifications: after an incident someone asks "who cordoned
gpu-17, when, and what exactly was sent?". Each line answers it: ``time`` (RFC 3339 UTC),
``context``, ``user`` (the kubeconfig user entry, never its credentials), ``action``,
``targets``, ``change`` (every write as sent, with its kubectl equivalent), ``dry_run``
(what the server-side dry run said), ``result`` and ``error``.

The file is created with mode 0600 (its directory 0700): it names nodes and workloads.
Values under keys that look like credentials are replaced before writing, so a change body
can never carry a token into the log.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gputui.actions.base import Change, Plan, Result
from gputui.sources.secrets import scrub

_SECRET_KEYS = ("token", "password", "secret", "authorization", "client-key", "client_key",
                "bearer", "credential")
REDACTED = "[redacted]"


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


class AuditLog:
    """Appends records to ``path`` (created 0600 on first write); thread-safe."""

    def __init__(self, path: str | Path, clock: Any = time.time):
        self.path = Path(path).expanduser()
        self._clock = clock
        self._lock = threading.Lock()

    def record(self, *, context: str, user: str, plan: Plan, dry_run: str,
               result: Result | None, error: str | None = None) -> dict[str, Any]:
        """Append one line for ``plan``; returns what was written."""
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._clock())),
            "context": context, "user": user, "action": plan.action_id,
            "targets": list(plan.targets),
            "change": [change_record(c) for c in plan.changes],
            "dry_run": dry_run,
            "result": None if result is None else _result_text(result),
            "error": error if error is not None else (result.error if result else None),
        }
        if plan.params:
            entry["params"] = redact(dict(plan.params))
        line = json.dumps(entry, separators=(",", ":"), default=str) + "\n"
        with self._lock:
            self._append(line)
        return entry

    def _append(self, line: str) -> None:
        line = scrub(line)  # an error's text may quote a credential gputui loaded
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def _result_text(result: Result) -> str:
    if result.cancelled:
        return "cancelled: " + result.summary
    return ("ok: " if result.ok else "failed: ") + result.summary
