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


def driver_generations(daemonsets: Mapping[str, JsonDict]) -> tuple[tuple[str, int], ...]:
    """(name, metadata.generation) of each driver DaemonSet, to tell outdated driver pods.

    DaemonSet pods carry ``pod-template-generation`` = the DS generation they were made
    from; the driver DS is OnDelete, so an older value means the pod awaits an upgrade.
    """
    result = []
    for name in sorted(daemonsets):
        ds = daemonsets[name]
        operand = operand_for_daemonset(name, kube.labels_of(ds))
        generation = kube.sub(ds, "metadata").get("generation")
        if operand is not None and operand.name == "driver" and isinstance(generation, int):
            result.append((name, generation))
    return tuple(result)
