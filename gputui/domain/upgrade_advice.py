"""Which per-node upgrade actions apply to a node's upgrade state, and the hints built on it.

One place answers "does holding (or releasing, retrying, requesting) this node do anything
now?": the hold action's plan and every upgrade hint ask :func:`why_not`, so a hint never
recommends what the next screen then says will not help. The facts (§4.4, k8s-operator-libs
``pkg/upgrade/upgrade_inplace.go``): the skip label is read only in ``upgrade-required``
(``ProcessUpgradeRequiredNodes``), so it keeps a node from *starting* and does nothing to a
node already past it; a retry is a relabel of ``upgrade-failed``; a request annotation is read
only in ``""`` and ``upgrade-done``.

An ``upgrade-failed`` node whose drain or pod deletion timed out on an eviction names the pod
in its ``GPUDriverUpgrade`` event (kubectl's drain helper: ``error when evicting
pods/"NAME" -n "NS": global timeout reached: 5m0s``): the eviction was refused (429) until
then, which is what a PodDisruptionBudget with no disruption left does. The hint names that
pod and what it is, not the driver pod, which is not the cause, and the budget that selects
it with what the budget allows now (:mod:`gputui.domain.disruption`); where the budgets or
the pod could not be read it says so and sends the operator to ``kubectl get pdb``.
"""

from __future__ import annotations

from gputui.domain.disruption import Budget, EvictionTimeout, HeldBudgets, eviction_timeout
from gputui.domain.model import GpuPod, NodeView, UpgradeEvent
from gputui.domain.selectors import terms_text
from gputui.domain.upgrade_state import (
    UpgradeClass,
    UpgradeState,
    holds_slot,
    upgrade_class,
)

#: the ``:`` names of the per-node upgrade actions (their registry aliases)
HOLD = "hold"
RELEASE = "release"
RETRY = "retry-upgrade"
REQUEST = "request-upgrade"
#: the ``:`` name of the policy action that sets how long a node waits for jobs
WAIT_FOR_COMPLETION = "wait-for-completion"



def why_not(action: str, state: str, skip: bool) -> str | None:
    """Why ``action`` (a ``:`` name above) does nothing for a node in ``state`` (with or
    without the skip label), or None when it applies."""
    if action == HOLD:
        if skip:
            return "already held"
        if not holds_slot(state):
            return None
        return (f"already in {state}: the hold only keeps a node from starting (it is read in "
                "upgrade-required), this one carries on")
    if action == RELEASE:
        return None if skip else "not held"
    if action == RETRY:
        return None if state == UpgradeState.FAILED else (
            f"not upgrade-failed ({state or 'no upgrade state'})")
    if action == REQUEST:
        return None if upgrade_class(state) is UpgradeClass.IDLE else (
            f"in {state}: a request only starts a node that is idle or upgrade-done")
    raise ValueError(f"not a per-node upgrade action: {action!r}")


def applies(action: str, node: NodeView) -> bool:
    """``action`` changes something for ``node`` in its current upgrade state."""
    return why_not(action, node.upgrade_state, node.upgrade_skip) is None


def waiting_for_jobs_hint(node: NodeView) -> str:
    """The hint of a node waiting in ``wait-for-jobs-required`` exactly as configured: it
    has started (cordoned), so only what acts on a started node is named."""
    hold = ("" if applies(HOLD, node) else
            " It has already started its upgrade, so holding it (skip label) no longer helps.")
    return ("Expected: the upgrade continues when the job ends." + hold + " To stop waiting "
            f"sooner, give waitForCompletion a timeout (:{WAIT_FOR_COMPLETION}; the job's pods "
            "are deleted when it runs out) or end the job.")


def _pod_words(pod: GpuPod | None) -> str:
    """" (app=trainer, Job trainer-llama, 8 GPUs, still on the node)", "" when unknown."""
    if pod is None:
        return ""
    app = pod.labels.get("app") or pod.labels.get("app.kubernetes.io/name")
    parts = ([f"app={app}"] if app else []) + (
        [f"{pod.owner_kind} {pod.owner_name}"] if pod.owner_kind else []) + [
        f"{pod.gpus} GPU{'s' if pod.gpus != 1 else ''}", "still on the node"]
    return f" ({', '.join(parts)})"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def budget_state(budget: Budget) -> str:
    """``PodDisruptionBudget ml/trainer-pdb (app=trainer) allows 0 disruptions (needs 1
    healthy pod, has 1)``: what the budget allows now, as its status says."""
    head = f"PodDisruptionBudget {budget.ref()} ({terms_text(budget.selector) or 'every pod'})"
    if budget.allowed is None:
        return head + " has no status yet (the disruption controller has not counted its pods)"
    counts = (f" (needs {_plural(budget.needed, 'healthy pod')}, has {budget.healthy})"
              if budget.needed is not None and budget.healthy is not None else "")
    return f"{head} allows {_plural(budget.allowed, 'disruption')}{counts}"


def _held_why(held: EvictionTimeout, verdict: HeldBudgets | None) -> tuple[str, str]:
    """(why the pod was never evicted, what to do before the retry), from what the budgets
    read say; every gap is said as one, never as "no budget"."""
    refused = f"its eviction was refused until the {held.after} timeout"
    find = (f"Find its budget (kubectl get pdb -n {held.namespace}); end or move that job, or "
            "let its budget allow a disruption, then retry")
    unknown = f"{refused}, as a PodDisruptionBudget with no disruption left does"
    if verdict is None or verdict.gap:
        gap = verdict.gap if verdict is not None else "PodDisruptionBudgets were not read"
        return f"{unknown}; which budget is not known: {gap}", find
    found = verdict.budgets
    if not verdict.labels_read:
        where = (f"in {held.namespace}, {', '.join(b.ref() for b in found)} "
                 f"allow{'s' if len(found) == 1 else ''} no disruption now" if found else
                 f"no budget in {held.namespace} is out of disruptions now")
        return (f"{unknown}; its labels were not read (gputui reads GPU pods and the pods the "
                f"upgrade waits for), so which budget selects it is not known ({where})", find)
    if not found:
        return (f"{refused}, yet no PodDisruptionBudget read in {held.namespace} selects it "
                "now (the budget may be gone, or the eviction was refused for another reason)",
                "Nothing read holds it now, so retry, and read the GPUDriverUpgrade events if "
                "it fails again")
    if len(found) > 1:
        return (f"PodDisruptionBudgets {', '.join(b.ref() for b in found)} all select it, and "
                f"the API server refuses to evict a pod that more than one budget selects: "
                f"{refused}", "Change their selectors so that one budget selects it (or end "
                "or move that job), then retry")
    budget = found[0]
    if budget.allowed:
        return (f"{budget_state(budget)} now, though {refused}",
                "Its budget allows a disruption now, so retry")
    limit = f" (it sets {budget.limit})" if budget.limit else ""
    return (f"{budget_state(budget)}, and {refused}", f"End or move that job, or let "
            f"{budget.ref()} allow a disruption{limit}, then retry")


def eviction_failure(node: NodeView, held: EvictionTimeout,
                     verdict: HeldBudgets | None = None) -> tuple[str, str]:
    """(what held the drain, the hint) for an eviction that timed out on ``node``; ``verdict``:
    what the budgets read say about the pod (None: they were not read)."""
    pod = next((p for p in node.gpu_pods + node.wait_pods
                if p.name == held.name and p.namespace == held.namespace), None)
    why, then = _held_why(held, verdict)
    cause = f"pod {held.ref()}{_pod_words(pod)} was never evicted: {why}"
    hint = (f"The driver is not the cause: {cause}. {then} (:{RETRY}: back to "
            "upgrade-required, finished steps are skipped). Until then the failed node keeps "
            "its upgrade slot and stays cordoned.")
    return cause, hint


def failed_hint(node: NodeView, event: UpgradeEvent | None,
                budgets: HeldBudgets | None = None) -> str:
    """The hint of an ``upgrade-failed`` node: about the step that failed, naming the pod
    that held a drain or pod deletion when the event says which, and its budget
    (``budgets``: the verdict on it, None when the budgets were not read)."""
    held = eviction_timeout(event)
    if held is not None:
        return eviction_failure(node, held, budgets)[1]
    step = event.previous_state if event is not None else ""
    retry = (f"then retry (:{RETRY}: back to upgrade-required, finished steps are skipped). "
             "A failed node holds an upgrade slot.")
    if step in (UpgradeState.DRAIN, UpgradeState.POD_DELETION):
        return ("Look at the pods still on the node and why they could not be removed (the "
                "GPUDriverUpgrade events in namespace default say which); remove the cause, "
                + retry)
    if step == UpgradeState.VALIDATION:
        return ("Read the operator-validator pod on the node (which init container waits); "
                "fix that layer, " + retry)
    return ("Check the driver pod (restarts, log) and the GPUDriverUpgrade events in namespace "
            "default; fix the cause, " + retry)
