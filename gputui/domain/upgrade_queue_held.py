"""A queue whose every upgrade slot is held by a node that will not move on by itself.

``upgrade-stalled`` for a queue waits ``upgrade_stalled_minutes`` (30) because a queue
behind upgrading nodes usually moves: they finish and free their slots. When every node
holding a slot is known not to finish soon, waiting 30 minutes to say so only hides it: at
minute 5 of a roll where three nodes wait for 31-hour jobs with no timeout and the fourth's
new driver crash-loops, the 20 nodes behind them will not move for hours. Said at once:

* ``info`` when every holder waits for jobs as ``waitForCompletion`` configures (timeout
  never): the policy's own doing, a healthy cluster's normal life;
* ``warning`` when a holder is ``upgrade-failed`` or its new driver pod is failing in
  ``pod-restart-required`` (it will fail after 10 restarts and keep the slot).

Slot holders are the nodes ``GetUpgradesInProgress`` counts (k8s-operator-libs
``pkg/upgrade/common_manager.go``): every state but ``""``, ``upgrade-done`` and
``upgrade-required``, ``upgrade-failed`` included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gputui.domain import catalogue as C
from gputui.domain.model import Finding, NodeView, Severity, StageStatus, UpgradeView
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_advice import HOLD, RETRY, WAIT_FOR_COMPLETION
from gputui.domain.upgrade_reasons import expected_wait
from gputui.domain.upgrade_state import UpgradeState, holds_slot

_NAMED = 8


@dataclass(frozen=True, slots=True)
class HeldSlots:
    """The slot holders of one queue, all stuck: waiting for jobs, or failed/failing."""

    waiting: tuple[str, ...]
    failing: tuple[str, ...]
    selector: str
    oldest_job: float | None

    @property
    def severity(self) -> Severity:
        return Severity.WARNING if self.failing else Severity.INFO

    def why(self, now: float) -> str:
        """"3 wait for app=trainer (no timeout, oldest job 31 h): a, b, c; 1 failed or
        with a failing new driver: d"."""
        parts = []
        if self.waiting:
            age = (f", oldest job {duration(now - self.oldest_job)}"
                   if self.oldest_job is not None else "")
            parts.append(f"{len(self.waiting)} wait for {self.selector} (no timeout{age}): "
                         f"{_names(self.waiting)}")
        if self.failing:
            parts.append(f"{len(self.failing)} failed or with a failing new driver: "
                         f"{_names(self.failing)}")
        return "; ".join(parts)

    def hint(self) -> str:
        """What moves the queue, naming only actions that apply to the nodes concerned."""
        said = []
        if self.failing:
            said.append("Fix the failing nodes first (their driver pod log; upgrade-failed "
                        f"ones then :{RETRY}).")
        if self.waiting:
            said.append("The waiting nodes move on when their jobs end: give waitForCompletion "
                        f"a timeout (:{WAIT_FOR_COMPLETION}) to stop waiting sooner.")
        said.append(f"Nodes still in upgrade-required can be kept on the old driver (:{HOLD}); "
                    "the nodes holding slots have started, so holding them no longer helps.")
        return " ".join(said)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _failing(node: NodeView) -> bool:
    if node.upgrade_state == UpgradeState.FAILED:
        return True
    driver = node.pipeline.stage("driver")
    return (node.upgrade_state == UpgradeState.POD_RESTART and driver is not None
            and driver.status is StageStatus.FAILED)


def held_slots(own: UpgradeView, holders: Sequence[NodeView], now: float) -> HeldSlots | None:
    """The queue's slot holders when none will free its slot by itself, else None.

    ``own`` is the queue's figures (its NVIDIADriver's when there are several) and
    ``holders`` the nodes holding its slots. A free slot, no holder, or one holder moving
    along (a node draining, validating, or waiting for a job that times out) gives None.
    """
    policy = own.policy
    if policy is None or not own.enabled or own.blocked or own.available_slots > 0:
        return None
    waiting, failing, starts = [], [], []
    for node in holders:
        if _failing(node):
            failing.append(node.name)
        elif (policy.wait_for_completion_timeout <= 0
              and expected_wait(node, policy, now)):
            waiting.append(node.name)
            starts += [p.start_time for p in node.wait_pods if p.start_time is not None]
        else:
            return None
    if not waiting and not failing:
        return None
    return HeldSlots(tuple(sorted(waiting)), tuple(sorted(failing)),
                     policy.wait_for_completion_selector, min(starts) if starts else None)


def slot_holders(view: UpgradeView, nodes: Mapping[str, NodeView],
                 member: Callable[[NodeView], bool] | None = None) -> list[NodeView]:
    """Nodes holding slots in ``view`` (all, or those ``member(node)`` accepts)."""
    found = []
    for name, status in view.nodes.items():
        if not holds_slot(status.state):
            continue
        node = nodes.get(name)
        if node is not None and (member is None or member(node)):
            found.append(node)
    return found


def held_queue_finding(held: HeldSlots, own: UpgradeView, owner: str | None,
                       waiting: Sequence[tuple[str, float]], now: float) -> Finding:
    """The one ``upgrade-stalled`` of a queue held by stuck slot holders, said at once."""
    names = sorted(name for name, _ in waiting)
    longest = max(now - since for _, since in waiting)
    cr = f" (NVIDIADriver {owner})" if owner else ""
    limit = str(own.max_parallel) if own.max_parallel else "unlimited"
    noun = "node" if len(names) == 1 else "nodes"
    return C.finding(
        C.UPGRADE_STALLED, None,
        f"upgrade queue held{cr}: {own.in_progress} of {limit} slots held by nodes that do "
        f"not move on by themselves ({held.why(now)}); {len(names)} {noun} waiting in "
        f"upgrade-required (longest {duration(longest)}): {_names(names)}",
        held.hint(), nodes=tuple(names), severity=held.severity)
