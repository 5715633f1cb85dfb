"""Reading pod status the way an operator reads ``kubectl get pods``.

Turns a pod dict into :class:`PodInfo`: the kubectl-style status (``Init:CrashLoopBackOff``,
``Init:1/4``, ``Running``), per-container states in spec order, restarts and GPU requests.
Pipeline, upgrade and findings all read pods through this one module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gputui.domain import kube
from gputui.domain.fastinit import maker
from gputui.domain.inputs import JsonDict
from gputui.domain.labels import is_gpu_resource

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

    def current_init(self) -> ContainerInfo | None:
        """The init container the pod is in (first not done), None once all are done."""
        for container in self.init_containers:
            if not container.done:
                return container
        return None


_parse_time = kube.parse_time
_NONE: JsonDict = {}  # read only: the absent lastState
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
    return _container_info(
        spec_name, init, kind, str(detail.get("reason", "")),
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
                name = entry.get("name")
                statuses[name if type(name) is str else str(name)] = entry
    names = ([str(c.get("name", "")) for c in listed if isinstance(c, dict)]
             if isinstance(listed, list) else [])
    extra = statuses.keys() - names  # statuses of containers the spec does not list
    if extra:
        names += [name for name in statuses if name in extra]
    return tuple([_container(name, statuses.get(name), init) for name in names])


def _gpu_requests(spec: JsonDict) -> dict[str, int]:
    totals: dict[str, int] = {}
    containers = spec.get("containers")
    if not isinstance(containers, list):
        return totals
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
    return {name: count for name, count in totals.items() if count > 0} if totals else totals


def gpu_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """GPU resources the pod's containers ask for (limits win over requests), summed."""
    return _gpu_requests(_as_dict(pod.get("spec")))


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


def _unschedulable(status: JsonDict) -> str:
    for entry in _dict_list(status.get("conditions")):
        if entry.get("type") == "PodScheduled":
            if entry.get("status") == "False":
                return str(entry.get("message") or entry.get("reason") or "unschedulable")
            return ""
    return ""


def read_pod(pod: Mapping[str, Any]) -> PodInfo:
    """Read one pod dict."""
    meta = _as_dict(pod.get("metadata"))
    status = _as_dict(pod.get("status"))
    spec = _as_dict(pod.get("spec"))
    phase = str(status.get("phase", ""))
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
    return _pod_info(
        str(meta.get("name", "")), str(meta.get("namespace", "")),
        str(spec.get("nodeName") or ""), phase, kube.str_map(_as_dict(meta.get("labels"))),
        _kubectl_status(phase, deleting, inits, mains),
        phase == "Running" and bool(mains) and all(c.ready for c in mains), restarts,
        _parse_time(status.get("startTime")), _parse_time(meta.get("creationTimestamp")),
        deleting, inits, mains, _gpu_requests(spec), str(owner.get("kind", "")),
        str(owner.get("name", "")), _unschedulable(status))
