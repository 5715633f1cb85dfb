"""Routing: discovery documents and one catch-all per API root, dispatched by URL shape.

Every handler error is an :class:`ApiError` turned into a ``Status`` here, so clients always
get a Kubernetes error body with the right code and reason, never an HTML page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from gputui.sim.apiserver import crud, discovery, evictions, podio
from gputui.sim.apiserver.common import (
    ApiContext,
    ctx_of,
    error_response,
    is_dry_run,
    json_response,
    method_not_allowed,
    read_json,
)
from gputui.sim.apiserver.lists import list_response, raise_for_collection_write
from gputui.sim.apiserver.negotiation import require_json_acceptable
from gputui.sim.apiserver.paths import Target, parse
from gputui.sim.apiserver.watch import is_watch, watch_response
from gputui.sim.errors import ApiError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


async def version(request: web.Request) -> web.Response:
    return json_response(discovery.VERSION_INFO)


async def health(request: web.Request) -> web.Response:
    """``/healthz``, ``/livez``, ``/readyz``: what probes and ``kubectl get --raw`` read."""
    return web.Response(text="ok", content_type="text/plain")


async def core_versions(request: web.Request) -> web.Response:
    return json_response(discovery.core_versions())


async def group_list(request: web.Request) -> web.Response:
    return json_response(discovery.group_list())


async def core_api(request: web.Request) -> web.StreamResponse:
    """Everything under ``/api/v1``."""
    tail = request.match_info["tail"]
    return await _dispatch(request, "", "v1", tail)


async def named_api(request: web.Request) -> web.StreamResponse:
    """Everything under ``/apis/<group>``: the group document, a version's list, resources."""
    group = request.match_info["group"]
    tail = request.match_info.get("tail", "")
    version_name, _, rest = tail.partition("/")
    if not version_name:
        document = discovery.api_group(group)
        if document is None:
            raise _not_found()
        return json_response(document)
    return await _dispatch(request, group, version_name, rest)


async def _dispatch(request: web.Request, group: str, version_name: str,
                    tail: str) -> web.StreamResponse:
    segments = [s for s in tail.split("/") if s != ""] if tail else []
    if not segments:
        document = discovery.resource_list(group, version_name)
        if document is None or request.method != "GET":
            raise _not_found()
        return json_response(document)
    legacy_watch = segments[0] == "watch"  # /api/v1/watch/... as old clients spell it
    if legacy_watch:
        segments = segments[1:]
    target = parse(group, version_name, segments, request.path)
    if target.subresource not in ("log", "proxy"):  # these answer in their own media types
        require_json_acceptable(request)
    if target.rtype.verbs == ("create",) and request.method != "POST":
        raise method_not_allowed(request.method)
    ctx = ctx_of(request)
    ctx.denials.check(_verb(request, target, legacy_watch), target.rtype.plural,
                      target.subresource or "", target.rtype.group, target.name,
                      target.namespace)
    if target.subresource:
        return await _subresource(ctx, target, request)
    if legacy_watch and request.method == "GET":
        return await _legacy_watch(ctx, target, request)
    if target.name is None:
        return await _collection(ctx, target, request)
    return await _item(ctx, target, request)


def _verb(request: web.Request, target: Target, legacy_watch: bool) -> str:
    """The Kubernetes verb a request asks for (what RBAC rules name)."""
    method = request.method
    if method == "GET":
        if legacy_watch or is_watch(request):
            return "watch"
        return "get" if target.name is not None else "list"
    if method == "DELETE" and target.name is None:
        return "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(
        method, method.lower())


async def _legacy_watch(ctx: ApiContext, target: Target,
                        request: web.Request) -> web.StreamResponse:
    """``/watch/<plural>[/<name>]``: a watch of the collection, narrowed to one name."""
    if target.name is None:
        return await watch_response(ctx, target, request)
    fields = request.query.get("fieldSelector")
    by_name = f"metadata.name={target.name}" + (f",{fields}" if fields else "")
    query = request.rel_url.query.copy()
    query["fieldSelector"] = by_name
    narrowed = request.clone(rel_url=request.rel_url.with_query(query))
    collection = Target(target.rtype, target.namespace, None, None)
    return await watch_response(ctx, collection, narrowed)


async def _collection(ctx: ApiContext, target: Target,
                      request: web.Request) -> web.StreamResponse:
    if request.method == "GET":
        if is_watch(request):
            return await watch_response(ctx, target, request)
        return await list_response(ctx, target, request)
    if request.method == "POST":
        raise_for_collection_write(target)
        return await crud.create_object(ctx, target, request)
    if request.method == "DELETE":
        raise_for_collection_write(target)
        return await crud.delete_collection(ctx, target, request)
    raise method_not_allowed(request.method)


async def _item(ctx: ApiContext, target: Target, request: web.Request) -> web.StreamResponse:
    method = request.method
    if method == "GET":
        return crud.get_object(ctx, target, request)
    if method == "PUT":
        return await crud.update_object(ctx, target, request)
    if method == "PATCH":
        return await crud.patch_object(ctx, target, request)
    if method == "DELETE":
        return await crud.delete_object(ctx, target, request)
    raise method_not_allowed(method)


async def _subresource(ctx: ApiContext, target: Target,
                       request: web.Request) -> web.StreamResponse:
    sub, method = target.subresource, request.method
    assert target.name is not None
    namespace = target.namespace or ""
    if sub == "proxy" and target.resource == "pods":
        return await podio.pod_proxy(ctx, namespace, target.name, target.rest, request)
    if sub == "proxy":
        raise ApiError(503, "ServiceUnavailable", "the emulated kubelet has no proxy")
    if target.rest:
        raise _not_found()
    if sub == "status" and method in ("GET", "PUT", "PATCH"):
        return await _item(ctx, target, request)
    if sub == "log" and method == "GET":
        return podio.pod_log(ctx, namespace, target.name, request)
    if sub == "eviction" and method == "POST":
        body = await read_json(request)
        status = evictions.evict(ctx, namespace, target.name, body, is_dry_run(request))
        return json_response(status, 201)
    raise method_not_allowed(method)


@web.middleware
async def status_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn API errors (and unexpected ones) into ``Status`` bodies."""
    try:
        return await handler(request)
    except ApiError as error:
        return error_response(error)
    except web.HTTPNotFound:
        return error_response(_not_found())
    except web.HTTPMethodNotAllowed as error:
        return error_response(method_not_allowed(error.method))


def add_routes(app: web.Application) -> None:
    from gputui.sim.apiserver.openapi import add_openapi_v3_routes, openapi_v2

    app.router.add_get("/version", version)
    app.router.add_get("/version/", version)
    app.router.add_get("/api", core_versions)
    app.router.add_get("/api/", core_versions)
    app.router.add_get("/apis", group_list)
    app.router.add_get("/apis/", group_list)
    app.router.add_get("/openapi/v2", openapi_v2)
    add_openapi_v3_routes(app)
    for probe in ("/healthz", "/livez", "/readyz"):
        app.router.add_get(probe, health)
    app.router.add_route("*", "/api/v1{tail:(/.*)?}", core_api)
    app.router.add_route("*", "/apis/{group}{tail:(/.*)?}", _strip_named)


async def _strip_named(request: web.Request) -> web.StreamResponse:
    request.match_info["tail"] = request.match_info.get("tail", "").lstrip("/")
    return await named_api(request)
