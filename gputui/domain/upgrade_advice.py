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
pod and what it is, not the driver pod, which is not the cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gputui.domain.model import GpuPod, NodeView, UpgradeEvent
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

_EVICTION_TIMEOUT = re.compile(
    r'error when evicting pods/"(?P<name>[^"]+)" -n "(?P<ns>[^"]+)": '
    r"global timeout reached: (?P<after>\S+)")


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


@dataclass(frozen=True, slots=True)
class EvictionTimeout:
    """The pod whose eviction was refused until a drain's or pod deletion's timeout."""

    namespace: str
    name: str
    after: str

    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


def eviction_timeout(event: UpgradeEvent | None) -> EvictionTimeout | None:
    """The pod named by a failed drain's or pod deletion's "global timeout reached" error."""
    if event is None:
        return None
    for text in (event.cause, event.message):
        match = _EVICTION_TIMEOUT.search(text)
        if match is not None:
            return EvictionTimeout(match["ns"], match["name"], match["after"])
    return None


def _pod_words(pod: GpuPod | None) -> str:
    """" (app=trainer, Job trainer-llama, 8 GPUs, still on the node)", "" when unknown."""
    if pod is None:
        return ""
    app = pod.labels.get("app") or pod.labels.get("app.kubernetes.io/name")
    parts = ([f"app={app}"] if app else []) + (
        [f"{pod.owner_kind} {pod.owner_name}"] if pod.owner_kind else []) + [
        f"{pod.gpus} GPU{'s' if pod.gpus != 1 else ''}", "still on the node"]
    return f" ({', '.join(parts)})"


def eviction_failure(node: NodeView, held: EvictionTimeout) -> tuple[str, str]:
    """(what held the drain, the hint) for an eviction that timed out on ``node``."""
    pod = next((p for p in node.gpu_pods + node.wait_pods
                if p.name == held.name and p.namespace == held.namespace), None)
    cause = (f"pod {held.ref()}{_pod_words(pod)} was never evicted: its eviction was refused "
             f"until the {held.after} timeout, as a PodDisruptionBudget with no disruption "
             "left does")
    hint = (f"The driver is not the cause: {cause}. Find its budget (kubectl get pdb -n "
            f"{held.namespace}); end or move that job, or let its budget allow a disruption, "
            f"then retry (:{RETRY}: back to upgrade-required, finished steps are skipped). "
            "Until then the failed node keeps its upgrade slot and stays cordoned.")
    return cause, hint


def failed_hint(node: NodeView, event: UpgradeEvent | None) -> str:
    """The hint of an ``upgrade-failed`` node: about the step that failed, naming the pod
    that held a drain or pod deletion when the event says which."""
    held = eviction_timeout(event)
    if held is not None:
        return eviction_failure(node, held)[1]
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
