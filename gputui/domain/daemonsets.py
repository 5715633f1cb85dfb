"""Operand DaemonSet rollout numbers (§1.6, §8.8) and the unscheduled-pod count (§4.3)."""

from __future__ import annotations

from collections.abc import Mapping

from gputui.domain import kube
from gputui.domain.inputs import JsonDict
from gputui.domain.model import DaemonSetSummary
from gputui.domain.operands import operand_for_daemonset
from gputui.domain.pods import PodInfo, as_pod_info


def _owned_counts(pods: Mapping[tuple[str, str], PodInfo | JsonDict],
                  namespace: str | None) -> dict[str, int]:
    """Pods per owning DaemonSet name (the controller compares this to desired)."""
    counts: dict[str, int] = {}
    for (ns, _), pod in pods.items():
        if namespace and ns != namespace:
            continue
        name = as_pod_info(pod).daemonset
        if name:
            counts[name] = counts.get(name, 0) + 1
    return counts


def summarize_daemonsets(daemonsets: Mapping[str, JsonDict],
                         pods: Mapping[tuple[str, str], PodInfo | JsonDict],
                         namespace: str | None,
                         owned: Mapping[str, int] | None = None) -> tuple[DaemonSetSummary, ...]:
    """One summary per DaemonSet, sorted by name.

    ``unscheduled`` is desired minus the pods the DaemonSet owns; when no pod of the
    namespace is visible at all it falls back to desired minus currentNumberScheduled.
    ``owned`` (pods per owning DaemonSet, kept by the builder's pod index) spares a walk
    over every pod; counted from ``pods`` when None.
    """
    if owned is None:
        owned = _owned_counts(pods, namespace)
    any_pods = bool(owned)
    result = []
    for name in sorted(daemonsets):
        ds = daemonsets[name]
        status = kube.sub(ds, "status")
        desired = kube.to_int(status.get("desiredNumberScheduled"))
        current = kube.to_int(status.get("currentNumberScheduled"))
        have = owned.get(name, 0) if any_pods else current
        operand = operand_for_daemonset(name, kube.labels_of(ds))
        result.append(DaemonSetSummary(
            name=name, operand=operand.name if operand else name, desired=desired,
            current=current, ready=kube.to_int(status.get("numberReady")),
            updated=kube.to_int(status.get("updatedNumberScheduled")),
            available=kube.to_int(status.get("numberAvailable")),
            misscheduled=kube.to_int(status.get("numberMisscheduled")),
            unscheduled=desired - have))
    return tuple(result)


#: a driver DaemonSet none of whose pods carries its current revision (its template changed
#: and no pod was made since): every pod is out of date
NO_POD_CURRENT = "-"


def _current_hash(ds: JsonDict, counts: Mapping[tuple[str, str], int]) -> str:
    """The DaemonSet's current ``controller-revision-hash`` as told by its pods and status,
    "" when they cannot tell, :data:`NO_POD_CURRENT` when no pod carries it.

    A pod made from the current template carries the current template generation
    (annotation ``deprecated.daemonset.template.generation``, which moves with template
    changes only) and, with it, the current hash. Without such a pod the DaemonSet's status
    says how many pods the controller counts as updated (``updatedNumberScheduled``: hash or
    template generation matches, kubernetes ``pkg/controller/daemon/util/daemonset_util.go``
    ``IsPodUpdated``), trusted only when ``observedGeneration`` is current.
    """
    generation = kube.sub(ds, "metadata", "annotations").get(
        "deprecated.daemonset.template.generation", "")
    current = {h for (h, g), n in counts.items() if h and g and g == generation and n > 0}
    if len(current) == 1:
        return next(iter(current))
    status, meta = kube.sub(ds, "status"), kube.sub(ds, "metadata")
    if current or kube.to_int(status.get("observedGeneration")) < kube.to_int(
            meta.get("generation")):
        return ""
    by_hash: dict[str, int] = {}
    for (h, _), n in counts.items():
        by_hash[h] = by_hash.get(h, 0) + n
    updated = kube.to_int(status.get("updatedNumberScheduled"))
    if updated == 0 and by_hash:
        return NO_POD_CURRENT
    matching = [h for h, n in by_hash.items() if h and n == updated]
    return matching[0] if len(matching) == 1 else ""


def driver_revisions(daemonsets: Mapping[str, JsonDict],
                     pods: Mapping[str, Mapping[tuple[str, str], int]]
                     ) -> tuple[tuple[str, str], ...]:
    """(name, current revision hash) of each driver DaemonSet whose current revision can be
    told (see :func:`_current_hash`); ``pods`` counts its pods per (hash, generation).

    The upgrade controller calls a driver pod out of date when its ``controller-revision-
    hash`` differs from the newest ControllerRevision's (k8s-operator-libs
    ``pkg/upgrade/common_manager.go`` ``podInSyncWithDS``, ``pod_manager.go``
    ``GetDaemonsetControllerRevisionHash``): the hash, not the generation, which also moves
    when something other than the template changes.
    """
    result = []
    for name in sorted(daemonsets):
        ds = daemonsets[name]
        operand = operand_for_daemonset(name, kube.labels_of(ds))
        if operand is None or operand.name != "driver":
            continue
        current = _current_hash(ds, pods.get(name, {}))
        if current:
            result.append((name, current))
    return tuple(result)
