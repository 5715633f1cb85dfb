"""Reading pod status the way an operator reads ``kubectl get pods``.

Turns a pod dict into :class:`PodInfo`: the kubectl-style status (``Init:CrashLoopBackOff``,
``Init:1/4``, ``Running``), per-container states in spec order, restarts and GPU requests.
Pipeline, upgrade and findings all read pods through this one module.

Why pods are read once, on arrival: :class:`PodInfo` is a function of the pod alone, so the
live cache keeps it instead of the pod's dict (``gputui.sources.decode`` reads each page's
pods straight into it). At 5,000 nodes that is 40,000 pods read once per change instead of
once per build, and a third of the memory a reduced dict tree took. The domain still takes
raw dicts wherever it takes pods (fixtures, tests, recordings): :func:`as_pod_info` reads
those on the way in.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from gputui.domain import kube
from gputui.domain.fastinit import maker
from gputui.domain.jsondict import JsonDict
from gputui.domain.labels import is_gpu_resource

#: the exit code a container runtime gives the containers it lost when the node went down
#: (``Unknown``, 255): their restart after a reboot is not a crash
LOST_IN_REBOOT = 255
#: waiting reasons that mean the container is failing, not just starting
FAILING_REASONS = frozenset({
    "CrashLoopBackOff", "Error", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
    "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
    "ContainerCannotRun", "OOMKilled", "StartError",
})


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """One container's state: ``state`` is ``waiting``, ``running``, ``terminated`` or
    ``unknown`` (no status yet)."""

    name: str
    init: bool
    state: str
    reason: str = ""
    message: str = ""
    exit_code: int | None = None
    restarts: int = 0
    ready: bool = False
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def done(self) -> bool:
        """An init container that finished successfully."""
        return self.state == "terminated" and self.exit_code == 0

    @property
    def failing(self) -> bool:
        """Crash-looping, failed to pull or start, or last exit non-zero."""
        if self.state == "waiting":
            return self.reason in FAILING_REASONS
        if self.state == "terminated":
            return self.exit_code not in (0, None)
        return False

    @property
    def retrying(self) -> bool:
        """Running again after a run that failed, and not through yet (not done, not ready).

        Why: between two ``CrashLoopBackOff`` s kubectl shows a crash-looping container
        ``Running``; read as "starting" it got a fresh grace at every restart, and its
        findings went from critical to "normal until ..." and back with each crash. A
        container lost in a reboot has its runtime's exit code 255 and is not counted: it
        did not fail, its machine went away.
        """
        return (self.state == "running" and not self.ready and self.restarts > 0
                and self.exit_code not in (None, 0, LOST_IN_REBOOT))


@dataclass(frozen=True, slots=True)
class PodInfo:
    """The parts of a pod the domain reasons about."""

    name: str
    namespace: str
    node: str
    phase: str
    labels: Mapping[str, str]
    status: str
    ready: bool
    restarts: int
    start_time: float | None
    created: float | None
    deleting: bool
    init_containers: tuple[ContainerInfo, ...] = ()
    containers: tuple[ContainerInfo, ...] = ()
    gpu_requests: Mapping[str, int] = field(default_factory=dict)
    owner_kind: str = ""
    owner_name: str = ""
    unschedulable: str = ""
    #: the node a pod not yet scheduled is pinned to (hostname node selector, DaemonSet
    #: node affinity); "" once ``node`` is set or when nothing pins it
    pinned_node: str = ""
    resource_version: str = ""
    #: when the pod's ``Ready`` condition last turned True (its ``lastTransitionTime``, which
    #: the kubelet moves only when the status changes); None while not Ready or unknown
    ready_since: float | None = None

    @property
    def placement(self) -> str | None:
        """The node the pod runs on or is bound to, None when it names none."""
        return self.node or self.pinned_node or None

    @property
    def daemonset(self) -> str:
        """The owning DaemonSet's name, "" when a DaemonSet does not own the pod."""
        return self.owner_name if self.owner_kind == "DaemonSet" else ""

    @property
    def gpus(self) -> int:
        """Total GPU-ish units requested (GPUs, shared replicas, MIG slices)."""
        return sum(self.gpu_requests.values())

    @property
    def active(self) -> bool:
        """Running or Pending (what the upgrade controller waits for and evicts)."""
        return self.phase in ("Running", "Pending") and not self.deleting

    def failing_container(self) -> ContainerInfo | None:
        """The first failing container, init containers first."""
        for container in self.init_containers + self.containers:
            if container.failing:
                return container
        return None

    def retrying_container(self) -> ContainerInfo | None:
        """The first container running again after a failed run, init containers first."""
        for container in self.init_containers + self.containers:
            if container.retrying:
                return container
        return None

    def current_init(self) -> ContainerInfo | None:
        """The init container the pod is in (first not done), None once all are done."""
        for container in self.init_containers:
            if not container.done:
                return container
        return None


_parse_time = kube.parse_time
_NONE: JsonDict = {}  # read only: the absent lastState
_NO_GPUS: Mapping[str, int] = MappingProxyType({})  # shared by the pods that ask for none
_NO_LABELS: Mapping[str, str] = MappingProxyType({})
_ONLY_STR = frozenset({str})
_INTERN_MAX = 64
HOSTNAME_LABEL = "kubernetes.io/hostname"
_container_info = maker(ContainerInfo)
_pod_info = maker(PodInfo)


def _as_dict(value: Any) -> JsonDict:
    """``value`` as a dict (the object itself when it is one), ``{}`` when not a mapping.

    Same rule as :func:`kube.sub`, inlined here because pods are the hot path at scale:
    45,000 operand pods are read on a first snapshot.
    """
    if type(value) is dict:
        return value
    if not value:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _dict_list(value: Any) -> list[JsonDict]:
    """The dict entries of a JSON list (as :func:`kube.items` does), ``[]`` otherwise."""
    if not isinstance(value, list):
        return []
    return [entry for entry in value if type(entry) is dict or isinstance(entry, dict)]


def _container(spec_name: str, status: JsonDict | None, init: bool) -> ContainerInfo:
    if not status:
        return _container_info(spec_name, init, "unknown")
    state = status.get("state")
    if type(state) is not dict:
        state = _as_dict(state)
    last_state = status.get("lastState")
    last = _as_dict(_as_dict(last_state).get("terminated")) if last_state else _NONE
    if "waiting" in state:
        kind = "waiting"
    elif "running" in state:
        kind = "running"
    elif "terminated" in state:
        kind = "terminated"
    else:
        kind = "unknown"
    detail = state.get(kind)
    if type(detail) is not dict:
        detail = _as_dict(detail)
    exit_code = detail.get("exitCode") if kind == "terminated" else last.get("exitCode")
    # while waiting (CrashLoopBackOff) the useful text is the last run's termination message
    first, second = (last, detail) if kind == "waiting" else (detail, last)
    message = first.get("message") or second.get("message") or ""
    restarts = status.get("restartCount")
    reason = detail.get("reason")
    return _container_info(
        spec_name, init, kind, sys.intern(reason) if type(reason) is str else str(reason or ""),
        message if type(message) is str else str(message),
        int(exit_code) if isinstance(exit_code, int) else None,
        restarts if type(restarts) is int else kube.to_int(restarts),
        bool(status.get("ready")), _parse_time(detail.get("startedAt")),
        _parse_time(detail.get("finishedAt")))


def _containers(spec: JsonDict, status: JsonDict, init: bool) -> tuple[ContainerInfo, ...]:
    spec_key, status_key = (("initContainers", "initContainerStatuses") if init
                            else ("containers", "containerStatuses"))
    listed, seen = spec.get(spec_key), status.get(status_key)
    if not listed and not seen:
        return ()
    statuses: dict[str, JsonDict] = {}
    if isinstance(seen, list):
        for entry in seen:
            if isinstance(entry, dict):
                statuses[_text(entry.get("name"))] = entry
    names = ([_text(c.get("name", "")) for c in listed if isinstance(c, dict)]
             if isinstance(listed, list) else [])
    extra = statuses.keys() - names  # statuses of containers the spec does not list
    if extra:
        names += [name for name in statuses if name in extra]
    return tuple([_container(name, statuses.get(name), init) for name in names])


def _gpu_requests(spec: JsonDict) -> Mapping[str, int]:
    totals: dict[str, int] = {}
    containers = spec.get("containers")
    if not isinstance(containers, list):
        return _NO_GPUS
    for container in containers:
        resources = container.get("resources") if isinstance(container, dict) else None
        if not resources:
            continue  # operand containers ask for no GPU: the common case, kept cheap
        resources = _as_dict(resources)
        requests = _as_dict(resources.get("requests"))
        limits = _as_dict(resources.get("limits"))
        for name, quantity in ({**requests, **limits} if requests else limits).items():
            if is_gpu_resource(str(name)):
                totals[str(name)] = totals.get(str(name), 0) + kube.to_int(quantity)
    asked = {name: count for name, count in totals.items() if count > 0}
    return asked or _NO_GPUS


def gpu_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """GPU resources the pod's containers ask for (limits win over requests), summed."""
    return dict(_gpu_requests(_as_dict(pod.get("spec"))))


def _kubectl_status(phase: str, deleting: bool, inits: tuple[ContainerInfo, ...],
                    mains: tuple[ContainerInfo, ...]) -> str:
    """The STATUS column of ``kubectl get pods``."""
    if deleting:
        return "Terminating"
    for index, container in enumerate(inits):
        if container.done:
            continue
        if container.state == "terminated":
            return "Init:" + (container.reason or "Error")
        if container.state == "waiting" and container.reason not in ("", "PodInitializing"):
            return "Init:" + container.reason
        return f"Init:{index}/{len(inits)}"
    for container in mains:
        if container.state == "waiting" and container.reason:
            return container.reason
        if container.state == "terminated" and container.reason:
            return container.reason
    return phase or "Unknown"


def _conditions(status: JsonDict) -> tuple[str, float | None]:
    """Why the pod is not scheduled ("" when it is) and when it last turned Ready (None
    while it is not Ready, or when no time is recorded), in one pass over its conditions."""
    unschedulable, ready_since = "", None
    for entry in _dict_list(status.get("conditions")):
        kind = entry.get("type")
        if kind == "PodScheduled" and entry.get("status") == "False":
            unschedulable = str(entry.get("message") or entry.get("reason") or "unschedulable")
        elif kind == "Ready" and entry.get("status") == "True":
            ready_since = _parse_time(entry.get("lastTransitionTime"))
    return unschedulable, ready_since


def _affinity_node(spec: JsonDict) -> str:
    """The node a DaemonSet pod is pinned to before it is scheduled.

    The DaemonSet controller binds each pod with a required node affinity on
    ``metadata.name In [<node>]``; until the scheduler sets ``nodeName`` that is the only
    place the node is named (a pending, unschedulable operand pod).
    """
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = (node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
                if isinstance(node_affinity, dict) else None)
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], dict):
        return ""
    fields = terms[0].get("matchFields")
    if not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], dict):
        return ""
    term = fields[0]
    values = term.get("values")
    if (term.get("key") == "metadata.name" and term.get("operator") == "In"
            and isinstance(values, list) and len(values) == 1 and values[0]):
        return str(values[0])
    return ""


def _pinned_node(spec: JsonDict) -> str:
    """Where an unscheduled pod is bound: the ``kubernetes.io/hostname`` node selector (the
    CUDA and plugin validator pods are pinned that way) or the DaemonSet's node affinity."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict) and selector.get(HOSTNAME_LABEL):
        return str(selector[HOSTNAME_LABEL])
    return _affinity_node(spec) if "affinity" in spec else ""


def _labels(raw: Any) -> Mapping[str, str]:
    """The pod's labels: the dict itself when it is all strings (the cache shares equal
    label dicts between pods and never changes one in place), a string copy otherwise."""
    if not raw:
        return _NO_LABELS
    labels = _as_dict(raw)
    if type(raw) is dict and {*map(type, labels), *map(type, labels.values())} <= _ONLY_STR:
        return labels
    return kube.str_map(labels)


def _text(value: Any) -> str:
    """A short string interned (node, container and owner names, phases and kinds repeat
    across the fleet)."""
    if type(value) is str:
        return sys.intern(value) if len(value) <= _INTERN_MAX else value
    return "" if value is None else str(value)


def read_pod(pod: Mapping[str, Any]) -> PodInfo:
    """Read one pod dict."""
    meta = _as_dict(pod.get("metadata"))
    status = _as_dict(pod.get("status"))
    spec = _as_dict(pod.get("spec"))
    phase = _text(status.get("phase", ""))
    inits = _containers(spec, status, init=True)
    mains = _containers(spec, status, init=False)
    deleting = bool(meta.get("deletionTimestamp"))
    owners = _dict_list(meta.get("ownerReferences"))
    owner = owners[0] if owners else {}
    restarts = 0
    for container in inits:
        restarts += container.restarts
    for container in mains:
        restarts += container.restarts
    node = _text(spec.get("nodeName") or "")
    unschedulable, ready_since = _conditions(status) if "conditions" in status else ("", None)
    return _pod_info(
        str(meta.get("name", "")), _text(meta.get("namespace", "")),
        node, phase, _labels(meta.get("labels")),
        _kubectl_status(phase, deleting, inits, mains),
        phase == "Running" and bool(mains) and all(c.ready for c in mains), restarts,
        _parse_time(status.get("startTime")), _parse_time(meta.get("creationTimestamp")),
        deleting, inits, mains, _gpu_requests(spec), _text(owner.get("kind", "")),
        _text(owner.get("name", "")), unschedulable,
        "" if node else _pinned_node(spec), str(meta.get("resourceVersion") or ""), ready_since)


def as_pod_info(pod: PodInfo | Mapping[str, Any]) -> PodInfo:
    """A pod as the domain reads it: an already-read :class:`PodInfo` as is, a dict read."""
    return pod if isinstance(pod, PodInfo) else read_pod(pod)


def _timestamp(when: float | None) -> str | None:
    if when is None:
        return None
    return _rfc3339(when)


@lru_cache(maxsize=65536)
def _rfc3339(when: float) -> str:
    """Kept: a recording's keyframe writes 250,000 pod times at 5,000 nodes, and pods made
    by one rollout share their seconds (formatting them was half the keyframe's cost)."""
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


def _container_status(container: ContainerInfo) -> JsonDict:
    detail: JsonDict = {"reason": container.reason} if container.reason else {}
    if container.message:
        detail["message"] = container.message
    if container.started_at is not None:
        detail["startedAt"] = _timestamp(container.started_at)
    if container.finished_at is not None:
        detail["finishedAt"] = _timestamp(container.finished_at)
    status: JsonDict = {"name": container.name, "ready": container.ready,
                        "restartCount": container.restarts, "state": {container.state: detail}}
    if container.exit_code is not None:
        if container.state == "terminated":
            detail["exitCode"] = container.exit_code
        else:
            status["lastState"] = {"terminated": {"exitCode": container.exit_code}}
    return status


def pod_to_dict(pod: PodInfo) -> JsonDict:
    """A Kubernetes-shaped dict that :func:`read_pod` reads back into ``pod`` (recordings).

    GPU requests are written as the first container's limits: only their sum is kept.
    """
    meta: JsonDict = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.created is not None:
        meta["creationTimestamp"] = _timestamp(pod.created)
    if pod.deleting:  # when is not kept; only that it is set is read
        meta["deletionTimestamp"] = _timestamp(pod.created) or "1970-01-01T00:00:00Z"
    if pod.owner_kind or pod.owner_name:
        meta["ownerReferences"] = [{"kind": pod.owner_kind, "name": pod.owner_name}]
    if pod.resource_version:
        meta["resourceVersion"] = pod.resource_version
    spec: JsonDict = {"nodeName": pod.node} if pod.node else {}
    if pod.pinned_node:
        spec["nodeSelector"] = {HOSTNAME_LABEL: pod.pinned_node}
    status: JsonDict = {"phase": pod.phase} if pod.phase else {}
    if pod.start_time is not None:
        status["startTime"] = _timestamp(pod.start_time)
    conditions: list[JsonDict] = []
    if pod.unschedulable:
        conditions.append({"type": "PodScheduled", "status": "False",
                           "message": pod.unschedulable})
    if pod.ready_since is not None:
        conditions.append({"type": "Ready", "status": "True",
                           "lastTransitionTime": _timestamp(pod.ready_since)})
    if conditions:
        status["conditions"] = conditions
    for spec_key, status_key, containers in (
            ("initContainers", "initContainerStatuses", pod.init_containers),
            ("containers", "containerStatuses", pod.containers)):
        if containers:
            spec[spec_key] = [{"name": c.name} for c in containers]
            seen = [_container_status(c) for c in containers if c.state != "unknown"]
            if seen:
                status[status_key] = seen
    if pod.gpu_requests and pod.containers:
        spec["containers"][0]["resources"] = {"limits": dict(pod.gpu_requests)}
    return {"metadata": meta, "spec": spec, "status": status}
