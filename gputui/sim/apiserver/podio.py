"""``pods/log`` and ``pods/proxy``: what the real server fetches from the kubelet.

Logs and container ports live in :class:`gputui.sim.nodeside.NodeSide`, written by the
emulated components; these handlers read them back with the real server's errors.
"""

from __future__ import annotations

from aiohttp import web

from gputui.sim.apiserver.common import ApiContext, int_param
from gputui.sim.errors import ApiError, bad_request
from gputui.sim.store import Obj

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


def _containers(pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    return [c.get("name", "") for c in spec.get("containers") or []]


def _all_containers(pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    inits = [c.get("name", "") for c in spec.get("initContainers") or []]
    return _containers(pod) + inits


def pick_container(pod: Obj, requested: str | None) -> str | None:
    """The container a log request means; 400 when it must be named or is unknown."""
    name = (pod.get("metadata") or {}).get("name", "")
    known = _all_containers(pod)
    if requested:
        if known and requested not in known:
            raise bad_request(f"container {requested} is not valid for pod {name}")
        return requested
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CONTAINER)
    if default:
        return str(default)
    main = _containers(pod)
    if len(main) > 1:
        raise bad_request(f"a container name must be specified for pod {name}, choose one "
                          f"of: [{' '.join(main)}] or one of the init containers: "
                          f"[{' '.join(known[len(main):])}]")
    return main[0] if main else None


def pod_log(ctx: ApiContext, namespace: str, name: str, request: web.Request) -> web.Response:
    pod = ctx.store.require("pods", name, namespace)
    container = pick_container(pod, request.query.get("container"))
    tail = int_param(request, "tailLines")
    if tail is not None and tail < 0:
        raise bad_request("tailLines must be non-negative")
    lines = ctx.nodeside.read_log(namespace, name, container, tail_lines=tail) or []
    if tail == 0:
        lines = []
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return web.Response(text=text, content_type="text/plain")


def split_port(segment: str) -> tuple[str, int | None]:
    """``name``, ``name:port`` or ``scheme:name:port`` as the real proxy URL allows."""
    parts = segment.split(":")
    if len(parts) == 3:
        parts = parts[1:]
    if len(parts) == 2 and parts[1]:
        try:
            return parts[0], int(parts[1])
        except ValueError:
            raise bad_request(f"invalid port in {segment!r}") from None
    return parts[0], None


async def pod_proxy(ctx: ApiContext, namespace: str, segment: str, rest: str,
                    request: web.Request) -> web.Response:
    """Forward a request to an emulated container port."""
    name, port = split_port(segment)
    ctx.store.require("pods", name, namespace)
    handler = ctx.nodeside.handler(namespace, name, port)
    if handler is None:
        raise ApiError(503, "ServiceUnavailable",
                       f"error trying to reach service: dial tcp: connect: connection refused "
                       f"(pod {namespace}/{name} port {port})")
    path = "/" + rest
    if request.query_string:
        path += "?" + request.query_string
    status, content_type, body = await handler(request.method, path)
    return web.Response(status=status, body=body,
                        headers={"Content-Type": content_type or "text/plain"})
