"""Carrying out a canary plan (:mod:`gputui.actions.canary`): send, watch, release.

"Upgraded" is read from the server, not inferred: the node's state label is
``upgrade-done`` *and* its driver pod runs the new version (right after the version patch a
node still says ``upgrade-done`` from the last roll until the controller's next cycle) *and*,
for the canary, its ``nvidia-operator-validator`` pod is Running with every container ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gputui.actions import canary_slots as S
from gputui.actions import upgrade_common as U
from gputui.actions.base import ClusterWriter, Plan, Progress, ProgressCallback, Result
from gputui.actions.guard import WriteInterrupted, stop_reason
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot
from gputui.domain.upgrade_state import UpgradeState

DRIVER_APPS = ("nvidia-driver-daemonset",)
DRIVER_COMPONENT = "nvidia-driver"
VALIDATOR_APP = "nvidia-operator-validator"
#: the label marking a hold a canary roll set (gputui.actions.canary imports this module)
HELD_BY = "gputui/held-by"


def runs_version(pod: Mapping[str, Any], version: str) -> bool:
    """A driver pod whose driver container image is tagged ``version`` (``580.82.07`` or
    ``580.82.07-ubuntu22.04``) or pinned to that digest."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        image = str(container.get("image", ""))
        if version.startswith("sha256:") and image.endswith("@" + version):
            return True
        tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
        if tag == version or tag.startswith(version + "-"):
            return True
    return False


def _is_driver(pod: Mapping[str, Any]) -> bool:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return (labels.get(L.APP) in DRIVER_APPS
            or labels.get("app.kubernetes.io/component") == DRIVER_COMPONENT)


def _ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    return status.get("phase") == "Running" and bool(containers) and all(
        c.get("ready") for c in containers)


class CanaryRun:
    """One apply of a canary plan."""

    def __init__(self, plan: Plan, writer: ClusterWriter, progress: ProgressCallback,
                 cancel: threading.Event, poll_seconds: float,
                 replan: Callable[[ClusterSnapshot], Plan]):
        self.plan, self.writer, self.progress, self.cancel = plan, writer, progress, cancel
        self.waiter = U.Waiter(cancel, poll_seconds)
        self.replan = replan
        self.version = str(plan.params["version"])
        self.canary = plan.targets[0]
        self.pools: list[tuple[str, list[str]]] = [
            (str(p), [str(n) for n in names]) for p, names in plan.params.get("pools", [])]
        self.held: list[str] = []
        self.done: list[str] = []
        self.total = 3 + len(self.pools)
        self.slots = S.SlotReader(plan, writer)

    # ------------------------------------------------------------------ flow
    def run(self) -> Result:
        """The steps in order; a stop during any request still says which holds are left
        (the operator must release them), never just "failed"."""
        try:
            return self._steps()
        except WriteInterrupted as stop:
            return self._stop("canary stopped while waiting on the server", stop.reason,
                              cancelled=True)

    def _steps(self) -> Result:
        stopped = self._hold() or self._set_version() or self._watch_canary()
        if stopped is not None:
            return stopped
        for index, (pool, names) in enumerate(self.pools):
            stopped = self._release(index, pool, names)
            if stopped is not None:
                return stopped
        return Result(ok=True, summary=f"driver {self.version} rolled out: canary "
                      f"{self.canary}, then {len(self.pools)} pool(s)",
                      details=tuple(self.done))

    def _say(self, step: int, message: str) -> None:
        self.progress(Progress(message, step, self.total))

    def _stop(self, summary: str, error: str | None = None, *, cancelled: bool = False,
              replan: Plan | None = None) -> Result:
        shown = ", ".join(self.held[:4]) + (f" and {len(self.held) - 4} more"
                                              if len(self.held) > 4 else "")
        holds = (f"holds left on {len(self.held)} node(s) ({shown}): :release-canary "
                 "releases them all" if self.held else "no holds were left")
        return Result(ok=False, summary=f"{summary}; {holds}", error=error,
                      cancelled=cancelled, details=(*self.done, holds),
                      interrupted=stop_reason(self.cancel) if cancelled else None,
                      conflict=replan is not None, replan=replan)

    # ----------------------------------------------------------------- steps
    def _hold(self) -> Result | None:
        changes = [c for c in self.plan.changes if c.kind == "Node"]
        self._say(0, f"holding {len(changes)} node(s)")
        sent, stopped = U.send_all(self.plan, self.writer, self.progress, self.cancel, changes)
        self.held = [line.split(":", 1)[0] for line in sent if "hold" in line]
        self.done.extend(sent)
        if stopped is not None:
            return self._stop(f"canary stopped while holding nodes: {stopped.summary}",
                              stopped.error, cancelled=stopped.cancelled)
        return None

    def _set_version(self) -> Result | None:
        if self.cancel.is_set():
            return self._stop("canary stopped before the version was set", cancelled=True)
        change = next(c for c in self.plan.changes if c.kind != "Node")
        self._say(1, change.summary)
        sent = U.send_policy_change(self.plan, change, self.writer, self.replan)
        if isinstance(sent, Result):
            return self._stop(f"canary stopped: the version was not set ({sent.summary})",
                              sent.error, replan=sent.replan)
        self.done.append(change.summary)
        return None

    def _watch_canary(self) -> Result | None:
        seen = [""]

        def finished() -> bool:
            seen[0] = U.upgrade_state(self.writer, self.canary)
            self._say(2, f"canary {self.canary}: {seen[0] or 'no upgrade state yet'}")
            return seen[0] == UpgradeState.FAILED or self._upgraded(self.canary, validator=True)

        outcome = self.waiter.until(finished)
        if outcome != "done":
            return self._stop(f"canary stopped while {self.canary} was in "
                              f"{seen[0] or 'no state'}", cancelled=True)
        if seen[0] == UpgradeState.FAILED:
            return self._stop(f"canary {self.canary} failed the upgrade (upgrade-failed): the "
                              f"roll-out is stopped; {self._slot_holders([self.canary])}",
                              "see the node's GPUDriverUpgrade events and its driver pod")
        self.done.append(f"{self.canary}: upgrade-done on {self.version}, validator passing")
        return None

    def _release(self, index: int, pool: str, names: Sequence[str]) -> Result | None:
        if self.cancel.is_set():
            return self._stop(f"canary stopped before releasing pool {pool}", cancelled=True)
        release = [U.node_labels_change(name, {L.UPGRADE_SKIP: None, HELD_BY: None},
                                        f"release: remove {L.UPGRADE_SKIP}")
                   for name in names if name in self.held]
        sent, stopped = U.send_all(self.plan, self.writer, self.progress, self.cancel, release)
        for line in sent:
            self.held.remove(line.split(":", 1)[0])
        self.done.append(f"pool {pool}: released {len(sent)} node(s)")
        if stopped is not None:
            return self._stop(f"canary stopped releasing pool {pool}: {stopped.summary}",
                              stopped.error, cancelled=stopped.cancelled)
        return self._wait_pool(index, pool, names)

    def _wait_pool(self, index: int, pool: str, names: Sequence[str]) -> Result | None:
        failed: list[str] = []
        left: list[str] = []

        def finished() -> bool:
            reads = {n: S.read_node(self.writer.get("Node", n)) for n in names}
            failed[:] = [n for n, r in reads.items() if r.state == UpgradeState.FAILED]
            left[:] = [n for n in names
                       if n not in failed and not self._upgraded(n, state=reads[n].state)]
            shown = left[:8]
            figures = (self.slots.figures(reads) if any(
                reads[n].state == UpgradeState.REQUIRED for n in shown) else None)
            waiting, blocked = S.describe(shown, reads, figures)
            self.progress(Progress(f"pool {pool}: {len(names) - len(left)} of {len(names)} "
                                   "upgraded", 3 + index, self.total, blocked, waiting))
            return bool(failed) or not left

        if self.waiter.until(finished) != "done":
            return self._stop(f"canary stopped while pool {pool} was rolling "
                              f"({len(left)} node(s) not done)", cancelled=True)
        if failed:
            return self._stop(f"pool {pool}: {', '.join(failed)} failed the upgrade; the "
                              f"roll-out is stopped; {self._slot_holders(failed)}")
        self.done.append(f"pool {pool}: {len(names)} node(s) upgrade-done on {self.version}")
        return None

    def _slot_holders(self, failed: Sequence[str]) -> str:
        """"gke-a stays cordoned and holds 1 of 1 upgrade slot(s) until fixed (then
        :retry-upgrade)": what holds the slots a failed node keeps."""
        figures = self.slots.figures({})
        limit = (f" of {figures.slots.max_parallel or 'unlimited'}" if figures is not None
                 else "")
        noun = "stays" if len(failed) == 1 else "stay"
        return (f"{', '.join(failed)} {noun} cordoned and hold{'s' if len(failed) == 1 else ''} "
                f"{len(failed)}{limit} upgrade slot(s) until fixed (then :retry-upgrade)")

    # --------------------------------------------------------------- reading
    def _upgraded(self, node: str, validator: bool = False, state: str | None = None) -> bool:
        """``state``: the node's upgrade state when just read (else it is read here)."""
        if (U.upgrade_state(self.writer, node) if state is None else state) != UpgradeState.DONE:
            return False
        pods = self.writer.list_pods_on_node(node)
        driver = [p for p in pods if _is_driver(p)]
        if not driver or not all(runs_version(p, self.version) and _ready(p) for p in driver):
            return False
        if not validator:
            return True
        checks = [p for p in pods
                  if ((p.get("metadata") or {}).get("labels") or {}).get(L.APP) == VALIDATOR_APP]
        return bool(checks) and all(_ready(p) for p in checks)
