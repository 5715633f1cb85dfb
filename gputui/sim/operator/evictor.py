"""The upgrade controller's pod deletion and drain, as ``k8s.io/kubectl/pkg/drain`` does them.

k8s-operator-libs hands both §4.4 step 5 (``pod-deletion-required``) and step 6
(``drain-required``) to kubectl's drain helper:

* ``GetPodsForDeletion`` runs every pod on the node through the helper's filters in order:
  DaemonSet pods are skipped (``IgnoreAllDaemonSets``), pods with an ``emptyDir`` volume are
  refused without ``deleteEmptyDir``, pods without a controller are refused without
  ``force`` (finished pods pass both), then the caller's filter (GPU pods only for pod
  deletion; ``drain.podSelector`` plus the drain-skip selector for drain) picks the rest.
* ``DeleteOrEvictPods`` evicts through the API server's eviction rule (here the same
  :mod:`gputui.sim.budgets` function the ``pods/eviction`` subresource uses); a 429 from a
  PodDisruptionBudget is retried every 5 s until the step's ``timeoutSeconds`` (0 = never
  gives up), then fails with kubectl's ``global timeout reached`` error.

Emulated: the filters, their error strings, PDB-refused evictions retried on the emulated
clock, the timeout and its error text. Not emulated: grace periods and waiting for deletion
(pods are deleted at once), mirror/static pods (there are none), DRA claims, and pods in the
operator's own namespace (only its completed ``nvidia-cuda-validator`` pods could match;
the emulator leaves them, which a real drain would delete to no effect).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gputui.sim import budgets
from gputui.sim.errors import ApiError
from gputui.sim.operator import keys as K
from gputui.sim.operator.world import World
from gputui.sim.store import Obj

RETRY_S = 5.0
LOCAL_STORAGE = "cannot delete Pods with local storage (use --delete-emptydir-data to override)"
UNMANAGED = "cannot delete Pods that declare no controller (use --force to override)"


@dataclass
class EvictionJob:
    """One node's pod deletion or drain in progress (the library's goroutine)."""

    started: float
    timeout: float                      # emulated seconds; 0 = no limit
    refused: dict[str, str] = field(default_factory=dict)  # "ns/name" -> last 429 message

    def expired(self, now: float) -> bool:
        return self.timeout > 0 and now >= self.started + self.timeout


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole seconds: ``5m0s``, ``45s``, ``1h0m0s``."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _owned_by_daemonset(pod: Obj) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in pod["metadata"].get("ownerReferences") or [])


def _has_controller(pod: Obj) -> bool:
    return any(o.get("controller") for o in pod["metadata"].get("ownerReferences") or [])


def _has_empty_dir(pod: Obj) -> bool:
    return any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or [])


def pods_for_deletion(world: World, node: str, keep: Callable[[Obj], bool], *, force: bool,
                      delete_empty_dir: bool) -> tuple[list[Obj], list[str]]:
    """``GetPodsForDeletion``: (pods to evict, error messages) among ``keep``'s pods.

    Like the helper, a pod stops at the first filter that refuses it; errors name the pods
    as ``namespace/name`` after kubectl's fixed messages.
    """
    chosen: list[Obj] = []
    refused: dict[str, list[str]] = {}
    for pod in world.store.list("pods", field_selector=f"spec.nodeName={node}")[0]:
        meta = pod["metadata"]
        if meta.get("namespace") == world.ns or _owned_by_daemonset(pod) or not keep(pod):
            continue
        ref = f"{meta['namespace']}/{meta['name']}"
        if _has_empty_dir(pod) and not delete_empty_dir and not _finished(pod):
            refused.setdefault(LOCAL_STORAGE, []).append(ref)
        elif not _has_controller(pod) and not force and not _finished(pod):
            refused.setdefault(UNMANAGED, []).append(ref)
        else:
            chosen.append(pod)
    return chosen, [f"{message}: {', '.join(refs)}" for message, refs in refused.items()]


def daemonset_gpu_pods(world: World, node: str) -> list[str]:
    """``namespace/name`` of live DaemonSet pods on ``node`` that request GPUs: the
    operator's ``gpuPodSpecFilter`` counts them although the drain helper never evicts them."""
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}"
            for p in world.store.list("pods", field_selector=f"spec.nodeName={node}")[0]
            if _owned_by_daemonset(p) and gpu_pod(p)]


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as is, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def evict_round(world: World, job: EvictionJob, pods: list[Obj]) -> str | None:
    """Try to evict ``pods`` once; returns a fatal error, else notes the 429-refused ones."""
    job.refused.clear()
    for pod in pods:
        meta = pod["metadata"]
        try:
            budgets.evict_pod(world.store, meta["namespace"], meta["name"],
                              forget=world.nodeside.forget_pod)
        except ApiError as error:
            if error.code == 404:
                continue
            if error.code != 429:
                return f'error when evicting pods/"{meta["name"]}" -n "{meta["namespace"]}": ' \
                       f"{error.message}"
            job.refused[f"{meta['namespace']}/{meta['name']}"] = error.message
    return None


def timeout_error(job: EvictionJob) -> str:
    """kubectl's error for the first pod still refused when the global timeout passes."""
    ref = next(iter(job.refused), "/")
    namespace, _, name = ref.partition("/")
    return (f'error when evicting pods/"{name}" -n "{namespace}": '
            f"global timeout reached: {go_duration(job.timeout)}")


def gpu_pod(pod: Obj) -> bool:
    """gpu-operator's ``gpuPodSpecFilter``: a Running/Pending pod asking for GPUs or MIG.

    A pod without a phase counts as Pending (a real API server writes that on create).
    """
    if ((pod.get("status") or {}).get("phase") or "Pending") not in ("Running", "Pending"):
        return False
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        for names in (resources.get("limits") or {}, resources.get("requests") or {}):
            if any(str(r).startswith((K.RESOURCE_GPU, K.RESOURCE_MIG_PREFIX)) for r in names):
                return True
    return False
