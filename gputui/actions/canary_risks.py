"""What would break a canary roll, checked against the server before ``y``.

The upgrade controller removes a node's GPU pods in ``pod-deletion-required`` by eviction
(k8s-operator-libs ``pod_manager.go``: the drain helper's ``DeleteOrEvictPods``), and, when
``drain.enable``, drains the node the same way. An eviction a PodDisruptionBudget refuses is
retried until the step's timeout; then the node goes ``upgrade-failed``, stays cordoned and
keeps its upgrade slot (``GetUpgradesInProgress`` counts it). A pod no controller manages is
refused unless ``force``. In a canary roll that stops everything: the canary's failure
leaves every other node held; a failure in a released pool leaves the later pools held.

So the plan asks the server, for the GPU pods of every node the roll would move (the
canary, then each pool), whether an eviction would be refused *now* (a server-side dry-run
eviction: 429 names the budget), and says, per node, what the upgrade would do with it and
how the roll would end. A pod that ``waitForCompletion`` waits for with no timeout does not
fail the node: the roll waits there instead, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gputui.actions import upgrade_common as U
from gputui.actions.base import ClusterWriter, Plan, WriteError
from gputui.actions.upgrade_policy import policy_of
from gputui.domain.model import ClusterSnapshot, GpuPod, NodeView
from gputui.domain.selectors import matches
from gputui.domain.upgrade_policy import UpgradePolicy

#: dry-run evictions sent per plan at most (one request each): the nearest pools first
CHECK_LIMIT = 100


@dataclass(frozen=True)
class Stuck:
    """A GPU pod the upgrade's deletion or drain will not remove, and where it is."""

    node: str
    pool: str
    pod: str
    why: str
    waited: bool  # waitForCompletion waits for it with no timeout: the roll waits, not fails


def _refusal(writer: ClusterWriter, pod: GpuPod, policy: UpgradePolicy) -> str | None:
    """Why the upgrade's eviction of ``pod`` would be refused now, None when it would not;
    raises :class:`WriteError` when the server cannot say."""
    if not pod.owner_kind and not policy.pod_deletion_force and not (
            policy.drain_enable and policy.drain_force):
        return "no controller manages it and neither podDeletion nor drain has force"
    try:
        writer.evict(pod.namespace, pod.name, dry_run=True)
    except WriteError as error:
        if error.status != 429:
            raise
        return (f"PodDisruptionBudget {error.budget} allows no disruption now" if error.budget
                else f"its eviction is refused now ({error.reason})")
    return None


def find_stuck(snapshot: ClusterSnapshot, pools: Sequence[tuple[str, Sequence[str]]],
               writer: ClusterWriter, policy: UpgradePolicy) -> tuple[list[Stuck], int, str]:
    """(stuck pods, pods checked, why the check stopped early or "") over ``pools`` in
    roll order."""
    stuck: list[Stuck] = []
    checked = 0
    for pool, names in pools:
        for name in names:
            node = snapshot.nodes.get(name)
            for pod in node.gpu_pods if node is not None else ():
                if pod.phase not in ("Running", "Pending") or pod.deleting:
                    continue
                if checked >= CHECK_LIMIT:
                    return stuck, checked, f"checked the first {CHECK_LIMIT} GPU pods only"
                checked += 1
                try:
                    why = _refusal(writer, pod, policy)
                except WriteError as error:
                    return stuck, checked, f"the server could not say ({error.reason})"
                if why is not None:
                    selector = policy.wait_for_completion_selector
                    waited = (bool(selector) and policy.wait_for_completion_timeout <= 0
                              and matches(selector, pod.labels))
                    stuck.append(Stuck(name, pool, f"{pod.namespace}/{pod.name}", why, waited))
    return stuck, checked, ""


def node_line(item: Stuck, policy: UpgradePolicy) -> str:
    """What the upgrade would do on the node of ``item``."""
    if item.waited:
        return (f"{item.node}: {item.pod} is refused eviction ({item.why}); waitForCompletion "
                f"waits for it with no timeout, so the roll waits at {item.node} in "
                "wait-for-jobs-required until that job ends")
    drain = (f", then the drain ({policy.drain_timeout} s) cannot either"
             if policy.drain_enable else " (drain off)")
    return (f"{item.node}: pod deletion ({policy.pod_deletion_timeout} s) cannot remove "
            f"{item.pod} ({item.why}){drain}: {item.node} would end upgrade-failed, cordoned, "
            "holding an upgrade slot")


def ending(stuck: Sequence[Stuck], canary: str, pools: Sequence[tuple[str, Sequence[str]]],
           policy: UpgradePolicy) -> str:
    """How the roll would end, in one line for the top of the dialog."""
    failing = [s for s in stuck if not s.waited]
    waiting = [s for s in stuck if s.waited]
    held = sum(len(names) for _, names in pools)
    if any(s.node == canary for s in failing):
        return (f"the roll would end at the canary: {canary} upgrade-failed holding a slot, "
                f"the {held} other node(s) left held (:release-canary releases them)")
    if failing:
        first = failing[0]
        order = [pool for pool, _ in pools]
        later = sum(len(names) for pool, names in pools[order.index(first.pool) + 1:])
        nodes = sorted({s.node for s in failing if s.pool == first.pool})
        held_later = (f"; {later} node(s) of later pools left held (:release-canary releases "
                      "them)" if later else "")
        return (f"the roll would stop in pool {first.pool}: {', '.join(nodes)} upgrade-failed, "
                f"cordoned, holding {len(nodes)} of "
                f"{policy.max_parallel_upgrades or 'unlimited'} upgrade slot(s) until fixed"
                + held_later)
    if waiting:
        return (f"the roll would wait (not fail) at {', '.join(sorted({s.node for s in waiting}))}"
                " until the jobs waitForCompletion waits for end")
    return ""


def check(plan: Plan, writer: ClusterWriter) -> Plan:
    """``plan`` (a canary plan) with the pods that would break the roll: the ending in its
    warnings (above the fold), each node's story and what was checked in its impact."""
    snapshot = plan.basis
    if plan.blocked or snapshot is None:
        return plan
    target = U.resolve_target(snapshot, plan.targets)
    if isinstance(target, str):
        return plan
    policy = policy_of(target)
    canary = plan.targets[0]
    node: NodeView | None = snapshot.nodes.get(canary)
    pools = [(str(p), [str(n) for n in names]) for p, names in plan.params.get("pools", [])]
    order = [(node.pool if node is not None and node.pool else "(no pool)", [canary]), *pools]
    stuck, checked, short = find_stuck(snapshot, order, writer, policy)
    said = (f"GPU pods checked against the upgrade's deletion and drain (server dry-run "
            f"evictions): {checked}" + (f"; {short}" if short else "")
            + ("; none would be refused" if not stuck else ""))
    end = ending(stuck, canary, pools, policy)
    return replace(plan, impact=(*plan.impact, said, *(node_line(s, policy) for s in stuck)),
                   warnings=((end,) if end else ()) + plan.warnings)
