"""Carry out a plan made only of patches, one change at a time, stopping when cancelled.

Cordon, uncordon and every label action are lists of independent node patches; they share
this loop so they report progress, stop on escape and quote the server the same way.
"""

from __future__ import annotations

import threading

from gputui.actions.base import ClusterWriter, Plan, Progress, ProgressCallback, Result, WriteError
from gputui.actions.guard import stop_reason


def apply_patches(plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
                  cancel: threading.Event, done_word: str) -> Result:
    """Send each change of ``plan``; the result lists what was done and what failed.

    A refused patch does not stop the others (each node is independent); the result is not
    ok and its ``error`` quotes the first refusal.
    """
    done: list[str] = []
    failed: list[str] = []
    first_error: str | None = None
    conflict = False
    total = len(plan.changes)
    for index, change in enumerate(plan.changes):
        if cancel.is_set():
            left = [c.name for c in plan.changes[index:]]
            return Result(False, f"stopped: {done_word} {_names(done)}; not sent: "
                                 f"{_names(left)}", details=tuple(failed), cancelled=True,
                          interrupted=stop_reason(cancel))
        progress(Progress(f"{change.summary} on {change.name}", index, total))
        try:
            writer.patch(change)
        except WriteError as error:
            conflict = conflict or error.status == 409
            failed.append(f"{change.name}: {error.reason}")
            first_error = first_error or f"{change.name}: {error.reason}"
            continue
        done.append(change.name)
    progress(Progress("done", total, total))
    if failed:
        return Result(False, f"{done_word} {_names(done)}; failed on {len(failed)}",
                      error=first_error, details=tuple(failed), conflict=conflict)
    return Result(True, f"{done_word} {_names(done)}",
                  details=tuple(f"{name}: {done_word}" for name in done))


def _names(names: list[str]) -> str:
    """``gpu-1, gpu-2`` or ``nothing``; long lists shortened (a notification is one line)."""
    if not names:
        return "nothing"
    if len(names) > 4:
        return f"{', '.join(names[:3])} and {len(names) - 3} more"
    return ", ".join(names)
