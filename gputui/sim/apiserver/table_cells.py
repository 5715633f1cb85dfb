"""Cell values of the built-in kinds' Table columns, as the real server's printers compute them."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def _parse_time(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """Kubernetes' short human duration: ``45s``, ``12m``, ``5h3m``, ``3d4h``, ``2y``."""
    secs = int(max(seconds, 0))
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    return f"{hours // (24 * 365)}y"


def age(stamp: Any, now: float) -> str:
    moment = _parse_time(stamp)
    return "<unknown>" if moment is None else human_duration(now - moment)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def node_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = "Unknown" if ready is None or ready.get("status") == "Unknown" else \
        "Ready" if ready.get("status") == "True" else "NotReady"
    if (obj.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted(key.split("/", 1)[1] for key in (_meta(obj).get("labels") or {})
                   if key.startswith("node-role.kubernetes.io/") and "/" in key)
    info = status.get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [_meta(obj).get("name", ""), state, ",".join(r for r in roles if r) or "<none>",
            age(_meta(obj).get("creationTimestamp"), now), info.get("kubeletVersion", ""),
            addresses.get("InternalIP", "<none>"), addresses.get("ExternalIP", "<none>"),
            info.get("osImage", "<unknown>"), info.get("kernelVersion", "<unknown>"),
            info.get("containerRuntimeVersion", "<unknown>")]


def _container_reason(statuses: list[dict[str, Any]], reason: str) -> str:
    for cstatus in reversed(statuses):
        state = cstatus.get("state") or {}
        waiting = state.get("waiting") or {}
        terminated = state.get("terminated") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated.get("reason"):
            reason = terminated["reason"]
    return reason


def _init_reason(pod: dict[str, Any]) -> str | None:
    spec_inits = (pod.get("spec") or {}).get("initContainers") or []
    inits = (pod.get("status") or {}).get("initContainerStatuses") or []
    for index, cstatus in enumerate(inits):
        state = cstatus.get("state") or {}
        terminated = state.get("terminated")
        if terminated and terminated.get("exitCode") == 0:
            continue
        if terminated:
            return f"Init:{terminated.get('reason') or 'Error'}"
        waiting = (state.get("waiting") or {}).get("reason")
        if waiting and waiting != "PodInitializing":
            return f"Init:{waiting}"
        return f"Init:{index}/{len(spec_inits) or len(inits)}"
    return None


def pod_status(pod: dict[str, Any]) -> str:
    """The STATUS column: reason, init progress, a container's waiting reason or the phase."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    init = _init_reason(pod)
    if init is not None:
        reason = init
    else:
        reason = _container_reason(status.get("containerStatuses") or [], reason)
    if _meta(pod).get("deletionTimestamp"):
        reason = "Terminating"
    return str(reason)


def pod_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    containers = (obj.get("spec") or {}).get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    return [_meta(obj).get("name", ""), f"{ready}/{len(containers)}", pod_status(obj),
            str(restarts), age(_meta(obj).get("creationTimestamp"), now),
            status.get("podIP") or "<none>", (obj.get("spec") or {}).get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", "<none>"]


def daemonset_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    spec = obj.get("spec") or {}
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    selector = pod_spec.get("nodeSelector") or {}
    containers = pod_spec.get("containers") or []
    match = (spec.get("selector") or {}).get("matchLabels") or {}
    return [_meta(obj).get("name", ""), status.get("desiredNumberScheduled", 0),
            status.get("currentNumberScheduled", 0), status.get("numberReady", 0),
            status.get("updatedNumberScheduled", 0), status.get("numberAvailable", 0),
            ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
            age(_meta(obj).get("creationTimestamp"), now),
            ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers),
            ",".join(f"{k}={v}" for k, v in sorted(match.items())) or "<none>"]


def event_cells(obj: dict[str, Any], now: float) -> list[Any]:
    involved = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or \
        _meta(obj).get("creationTimestamp")
    target = f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"
    return [age(last, now), obj.get("type", ""), obj.get("reason", ""), target,
            str(obj.get("message", "")).strip()]
