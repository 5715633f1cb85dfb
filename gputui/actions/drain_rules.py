"""Which pods a drain evicts, skips or refuses: kubectl drain's rules, pure.

kubectl (``k8s.io/kubectl/pkg/drain/filters.go``) decides per pod, and gputui must decide
the same way so its drain is the twin of ``kubectl drain --ignore-daemonsets``:

* pods of a DaemonSet: skipped (every GPU node runs the operator's; evicting them only
  makes the DaemonSet controller put them back); a pod whose DaemonSet no longer exists is
  an orphan, refused unless forced (then evicted), as kubectl does;
* mirror pods (static pods, annotation ``kubernetes.io/config.mirror``): skipped, the
  kubelet owns them;
* finished pods (``Succeeded``/``Failed``), a DaemonSet's too: evicted, whatever else holds;
* pods with an ``emptyDir`` volume: refused unless ticked (its data is lost);
* pods with no controller: refused unless forced (nothing would recreate them).

The first rule that holds decides, in kubectl's order (``makeFilters``). One difference, on
the safe side: a DaemonSet that cannot be read for another reason than 404 counts as
existing (its pod is skipped), where kubectl refuses the pod.

A refused pod stops the whole drain before any eviction, as kubectl does, so the operator
decides with the full list in front of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass(frozen=True)
class DrainOptions:
    """kubectl's switches: ``--delete-emptydir-data`` and ``--force``."""

    delete_emptydir: bool = False
    force: bool = False


@dataclass(frozen=True)
class PodRef:
    """One pod to evict, with its uid (a recreated pod of the same name is not it)."""

    namespace: str
    name: str
    uid: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class Sorting:
    """A node's pods sorted by the rules."""

    evict: list[PodRef] = field(default_factory=list)
    daemonset: list[str] = field(default_factory=list)
    mirror: list[str] = field(default_factory=list)
    unmanaged: list[str] = field(default_factory=list)
    emptydir: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    #: the evicted pods that have finished (Succeeded/Failed): evicted whatever else holds
    finished: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return bool(self.unmanaged or self.emptydir or self.orphans)

    def refusal(self) -> str:
        """kubectl's refusal in one sentence, naming the switch that would allow it."""
        parts = []
        if self.unmanaged:
            parts.append("pods not managed by a controller (--force allows them): "
                         + ", ".join(self.unmanaged))
        if self.orphans:
            parts.append("pods whose DaemonSet is gone (--force allows them): "
                         + ", ".join(self.orphans))
        if self.emptydir:
            parts.append("pods with emptyDir data (--delete-emptydir-data allows them): "
                         + ", ".join(self.emptydir))
        return "cannot evict " + "; ".join(parts)


def sort_pods(pods: Iterable[Mapping[str, Any]], options: DrainOptions,
              daemonset_exists: Callable[[str, str], bool] = lambda ns, name: True) -> Sorting:
    """Apply the rules to a node's pods (raw JSON, as listed).

    ``daemonset_exists(namespace, name)`` answers whether a pod's DaemonSet still exists
    (the apply asks the server; kubectl does the same).
    """
    sorting = Sorting()
    for pod in pods:
        metadata = pod.get("metadata") or {}
        ref = PodRef(str(metadata.get("namespace") or ""), str(metadata.get("name") or ""),
                     str(metadata.get("uid") or ""))
        finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        controller = _controller(metadata)
        # kubectl's filters in kubectl's order; the first that does not let a pod through
        # decides (so a pod without a controller and with emptyDir data is an emptyDir one)
        if controller is not None and controller.get("kind") == "DaemonSet" and not finished:
            if daemonset_exists(ref.namespace, str(controller.get("name") or "")):
                sorting.daemonset.append(str(ref))
            elif options.force:
                sorting.evict.append(ref)
            else:
                sorting.orphans.append(str(ref))
        elif MIRROR_ANNOTATION in (metadata.get("annotations") or {}):
            sorting.mirror.append(str(ref))
        elif not finished and _has_emptydir(pod) and not options.delete_emptydir:
            sorting.emptydir.append(str(ref))
        elif not finished and controller is None and not options.force:
            sorting.unmanaged.append(str(ref))
        else:
            sorting.evict.append(ref)
            if finished:
                sorting.finished.append(str(ref))
    return sorting


def _controller(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for owner in metadata.get("ownerReferences") or []:
        if isinstance(owner, Mapping) and owner.get("controller"):
            return owner
    return None


def _has_emptydir(pod: Mapping[str, Any]) -> bool:
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return any(isinstance(v, Mapping) and "emptyDir" in v for v in volumes)
