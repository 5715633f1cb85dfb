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


def _container(spec_name: str, status: Mapping[str, Any] | None, init: bool) -> ContainerInfo:
    if not status:
        return ContainerInfo(name=spec_name, init=init, state="unknown")
    state = kube.sub(status, "state")
    last = kube.sub(status, "lastState", "terminated")
    kind = next((k for k in ("waiting", "running", "terminated") if k in state), "unknown")
    detail = kube.sub(state, kind)
    exit_code = detail.get("exitCode") if kind == "terminated" else last.get("exitCode")
    # while waiting (CrashLoopBackOff) the useful text is the last run's termination message
    first, second = (last, detail) if kind == "waiting" else (detail, last)
    message = str(first.get("message") or second.get("message") or "")
    return ContainerInfo(
        name=spec_name, init=init, state=kind, reason=str(detail.get("reason", "")),
        message=message, exit_code=int(exit_code) if isinstance(exit_code, int) else None,
        restarts=kube.to_int(status.get("restartCount")), ready=bool(status.get("ready")),
        started_at=kube.parse_time(detail.get("startedAt")),
        finished_at=kube.parse_time(detail.get("finishedAt")))


def _containers(pod: Mapping[str, Any], init: bool) -> tuple[ContainerInfo, ...]:
    spec_key, status_key = (("initContainers", "initContainerStatuses") if init
                            else ("containers", "containerStatuses"))
    statuses = {str(s.get("name")): s for s in kube.items(pod, "status", status_key)}
    names = [str(c.get("name", "")) for c in kube.items(pod, "spec", spec_key)]
    names += [n for n in statuses if n not in names]
    return tuple(_container(name, statuses.get(name), init) for name in names)


def gpu_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """GPU resources the pod's containers ask for (limits win over requests), summed."""
    totals: dict[str, int] = {}
    for container in kube.items(pod, "spec", "containers"):
        resources = kube.sub(container, "resources")
        wanted = {**kube.sub(resources, "requests"), **kube.sub(resources, "limits")}
        for name, quantity in wanted.items():
            if is_gpu_resource(str(name)):
                totals[str(name)] = totals.get(str(name), 0) + kube.to_int(quantity)
    return {name: count for name, count in totals.items() if count > 0}


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


def _unschedulable(pod: Mapping[str, Any]) -> str:
    scheduled = kube.condition(pod, "PodScheduled")
    if scheduled.get("status") == "False":
        return str(scheduled.get("message") or scheduled.get("reason") or "unschedulable")
    return ""


def read_pod(pod: Mapping[str, Any]) -> PodInfo:
    """Read one pod dict."""
    meta = kube.sub(pod, "metadata")
    status = kube.sub(pod, "status")
    phase = str(status.get("phase", ""))
    inits = _containers(pod, init=True)
    mains = _containers(pod, init=False)
    deleting = bool(meta.get("deletionTimestamp"))
    owners = kube.items(pod, "metadata", "ownerReferences")
    owner = owners[0] if owners else {}
    return PodInfo(
        name=str(meta.get("name", "")), namespace=str(meta.get("namespace", "")),
        node=str(kube.sub(pod, "spec").get("nodeName") or ""), phase=phase,
        labels=kube.labels_of(pod), status=_kubectl_status(phase, deleting, inits, mains),
        ready=phase == "Running" and bool(mains) and all(c.ready for c in mains),
        restarts=sum(c.restarts for c in inits + mains),
        start_time=kube.parse_time(status.get("startTime")),
        created=kube.parse_time(meta.get("creationTimestamp")), deleting=deleting,
        init_containers=inits, containers=mains, gpu_requests=gpu_requests(pod),
        owner_kind=str(owner.get("kind", "")), owner_name=str(owner.get("name", "")),
        unschedulable=_unschedulable(pod))
