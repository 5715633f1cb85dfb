"""The eviction loop of a drain: evict, retry what a budget refuses, wait until pods are gone.

Like ``kubectl drain``: each pod gets a policy/v1 Eviction; a 429 (a PodDisruptionBudget
has no disruption left) is retried with backoff until the drain's timeout and is never
turned into a delete; an evicted pod counts only once the server no longer has it (or has
a new pod of that name, another uid). Progress after every round says how many pods are
left and which are blocked by which budget; escape (``cancel``) stops further evictions
and the result says what was already evicted. Each request is bounded by the time the
drain's timeout leaves and the wait for it by the cancel (:mod:`gputui.actions.guard`), so a
hung server cannot stretch the drain past its timeout, nor escape past a fraction of a second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gputui.actions.base import ClusterWriter, Progress, ProgressCallback, Result, WriteError
from gputui.actions.drain_rules import PodRef
from gputui.actions.guard import TimeUp, WriteInterrupted, stop_reason, write_deadline

#: first and longest wait between two rounds of evictions (kubectl waits 5 s after a 429)
BACKOFF_START = 0.5
BACKOFF_MAX = 5.0


def _transient(error: WriteError) -> bool:
    """A failure worth the next round: the server failing for a moment (5xx) or out of reach.

    An eviction is safe to send again: one that did land makes the pod go, and evicting a pod
    that is gone answers 404, which counts as gone. So a drain interrupted by a fault resumes
    when the server is back, or stops at its timeout naming each pod left and why.
    """
    unreachable = error.status == 0 and error.reason.startswith("cannot reach")
    return error.status in (500, 502, 503, 504) or unreachable


@dataclass
class _Pod:
    ref: PodRef
    evicted: bool = False
    gone: bool = False
    tries: int = 0
    budget: str | None = None
    refusal: str = ""
    error: str | None = None

    def line(self) -> str:
        if self.error:
            return f"{self.ref}: failed: {self.error}"
        if self.budget or self.refusal:
            by = f"PodDisruptionBudget {self.budget}" if self.budget else self.refusal
            return f"{self.ref}: refused by {by} ({self.tries} tr{'ies' if self.tries != 1 else 'y'})"
        if not self.evicted:  # stopped or out of time before its eviction was sent
            return f"{self.ref}: not evicted: its eviction was never sent"
        if not self.gone:
            return f"{self.ref}: evicted, still terminating"
        return f"{self.ref}: evicted"


class EvictionLoop:
    """Evict ``pods`` until all are gone, the timeout passes, or ``cancel`` is set."""

    def __init__(self, writer: ClusterWriter, pods: list[PodRef], progress: ProgressCallback,
                 cancel: threading.Event, timeout: float, label: str,
                 clock: Callable[[], float] = time.monotonic):
        self.writer = writer
        self.pods = [_Pod(ref) for ref in pods]
        self.progress = progress
        self.cancel = cancel
        self.timeout = timeout
        self.label = label
        self.clock = clock

    def run(self) -> Result:
        with write_deadline(self.writer, self.timeout):
            return self._run()

    def _run(self) -> Result:
        deadline = self.clock() + self.timeout
        delay = BACKOFF_START
        while True:
            self._round()
            self._check_gone()
            self._report()
            if all(p.gone or p.error for p in self.pods) or self.cancel.is_set():
                break
            if self.clock() + delay > deadline:
                break
            if self.cancel.wait(delay):
                break
            delay = min(delay * 2, BACKOFF_MAX)
        return self._result()

    def _round(self) -> None:
        for pod in self.pods:
            if pod.evicted or pod.error:
                continue
            if self.cancel.is_set():
                return
            pod.tries += 1
            try:
                self.writer.evict(pod.ref.namespace, pod.ref.name)
            except TimeUp:
                pod.tries -= 1  # not sent: the pod keeps what its last try said (a budget)
                return
            except WriteInterrupted:
                return  # stopped: not sent, or its answer not awaited
            except WriteError as error:
                if error.status == 404:
                    pod.evicted = pod.gone = True
                elif error.status == 429 or _transient(error):
                    pod.budget, pod.refusal = error.budget, error.reason  # next round again
                else:
                    pod.error = error.reason
                continue
            pod.evicted, pod.budget, pod.refusal = True, None, ""

    def _check_gone(self) -> None:
        for pod in self.pods:
            if not pod.evicted or pod.gone:
                continue
            try:
                current = self.writer.get("Pod", pod.ref.name, pod.ref.namespace)
            except (WriteInterrupted, TimeUp):
                return
            except WriteError as error:
                if error.status == 404:
                    pod.gone = True
                continue
            uid = str((current.get("metadata") or {}).get("uid") or "")
            pod.gone = bool(pod.ref.uid) and uid != pod.ref.uid

    def _report(self) -> None:
        left = [p for p in self.pods if not p.gone]
        blocked = tuple(p.line() for p in left if p.budget or p.refusal)
        gone = len(self.pods) - len(left)
        self.progress(Progress(f"draining {self.label}: {len(left)} pod"
                               f"{'s' if len(left) != 1 else ''} left", gone,
                               len(self.pods), blocked, glance=self._glance(left, gone)))

    def _glance(self, left: list[_Pod], gone: int) -> str:
        """``3/5 evicted, 1 refused by budget trainer-pdb, try 4``: the header's running
        line; the try count moves as refused evictions are retried."""
        parts = [f"{gone}/{len(self.pods)} evicted"]
        budgets: dict[str, int] = {}
        for pod in left:
            if pod.budget or pod.refusal:
                by = f"budget {pod.budget}" if pod.budget else "the server"
                budgets[by] = budgets.get(by, 0) + 1
        parts += [f"{count} refused by {by}" for by, count in budgets.items()]
        tries = max((p.tries for p in left if p.budget or p.refusal), default=0)
        if tries > 1:
            parts.append(f"try {tries}")
        return ", ".join(parts)

    def _result(self) -> Result:
        evicted = [str(p.ref) for p in self.pods if p.evicted]
        left = [p for p in self.pods if not p.gone]
        details = tuple(p.line() for p in self.pods)
        if self.cancel.is_set():
            return Result(False, f"drain of {self.label} stopped: evicted "
                                 f"{', '.join(evicted) or 'nothing'}; "
                                 f"{len(left)} pod{'s' if len(left) != 1 else ''} left",
                          details=details, cancelled=True,
                          interrupted=stop_reason(self.cancel))
        if not left:
            return Result(True, f"drained {self.label}: {len(self.pods)} pod"
                                f"{'s' if len(self.pods) != 1 else ''} evicted and gone",
                          details=details)
        first = next((p for p in left if p.error or p.budget or p.refusal), left[0])
        error = first.line()
        return Result(False, f"{self.label} not drained: {len(left)} pod"
                             f"{'s' if len(left) != 1 else ''} still there after "
                             f"{self.timeout:g} s", error=error, details=details)
