"""Object verbs: get, create, update (PUT), patch, delete and deletecollection.

Every write is validated before it reaches the store, honours ``?dryRun=All`` and records the
request's field manager, so managedFields look like a real cluster's.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from gputui.sim.apiserver.common import (
    ApiContext,
    dumps,
    is_dry_run,
    json_bytes_response,
    json_response,
    manager_of,
    read_json,
    success_status,
)
from gputui.sim.apiserver.lists import select, single_table, write_chunked
from gputui.sim.apiserver.patch import apply_patch
from gputui.sim.apiserver.paths import Target
from gputui.sim.apiserver.rbac import review_status, self_subject_review
from gputui.sim.apiserver.tables import wants_table
from gputui.sim.apiserver.validation import check_target_matches, validate_object
from gputui.sim.errors import ApiError, conflict, not_found
from gputui.sim.store import Obj


def _respond(ctx: ApiContext, target: Target, obj: Obj, dry_run: bool,
             status: int = 200) -> web.Response:
    """Stored objects come from the cache; dry-run results are encoded fresh."""
    if dry_run:
        return json_response(obj, status)
    return json_bytes_response(ctx.cache.encode(target.resource, obj), status)


def get_object(ctx: ApiContext, target: Target, request: web.Request) -> web.Response:
    assert target.name is not None
    obj = ctx.store.require(target.resource, target.name, target.namespace)
    accept = request.headers.get("Accept", "")
    if wants_table(accept):
        return json_bytes_response(single_table(ctx, target, obj, accept))
    return json_bytes_response(ctx.cache.encode(target.resource, obj))


def _self_review(ctx: ApiContext, body: Any) -> web.Response:
    """SelfSubjectAccessReview: allowed unless ``--deny`` refuses it (see ``rbac``)."""
    review = dict(body) if isinstance(body, dict) else {}
    review.setdefault("apiVersion", "authorization.k8s.io/v1")
    review.setdefault("kind", "SelfSubjectAccessReview")
    review.setdefault("metadata", {})
    spec = review.get("spec") if isinstance(review.get("spec"), dict) else {}
    attributes = (spec or {}).get("resourceAttributes")
    if not isinstance(attributes, dict):
        review["status"] = {"allowed": True,
                            "reason": "gputui emulated cluster allows every non-resource URL"}
    else:
        review["status"] = review_status(ctx.denials, attributes)
    return json_response(review, 201)


async def create_object(ctx: ApiContext, target: Target, request: web.Request) -> web.Response:
    body = await read_json(request)
    if target.resource == "selfsubjectaccessreviews.authorization.k8s.io":
        return _self_review(ctx, body)
    if target.resource == "selfsubjectreviews.authentication.k8s.io":
        return json_response(self_subject_review(ctx.denials.identity, body), 201)
    validate_object(target.rtype, body)
    check_target_matches(body, None, target.namespace)
    dry_run = is_dry_run(request)
    if target.namespace is not None:
        body = {**body, "metadata": {**(body.get("metadata") or {}),
                                     "namespace": target.namespace}}
    created = ctx.store.create(target.resource, body, manager=manager_of(request),
                               dry_run=dry_run)
    return _respond(ctx, target, created, dry_run, 201)


async def update_object(ctx: ApiContext, target: Target, request: web.Request) -> web.Response:
    assert target.name is not None
    body = await read_json(request)
    validate_object(target.rtype, body)
    check_target_matches(body, target.name, target.namespace)
    dry_run = is_dry_run(request)
    metadata = {**(body.get("metadata") or {}), "name": target.name}
    if target.namespace is not None:
        metadata["namespace"] = target.namespace
    body = {**body, "metadata": metadata}
    body.setdefault("apiVersion", target.rtype.api_version)
    body.setdefault("kind", target.rtype.kind)
    updated = ctx.store.update(target.resource, body, manager=manager_of(request),
                               dry_run=dry_run, subresource=target.subresource)
    return _respond(ctx, target, updated, dry_run)


async def patch_object(ctx: ApiContext, target: Target, request: web.Request) -> web.Response:
    assert target.name is not None
    patch = await read_json(request)
    dry_run = is_dry_run(request)
    content_type = request.headers.get("Content-Type", "")
    rtype = target.rtype

    def change(obj: Obj) -> None:
        before_rv = obj["metadata"].get("resourceVersion")
        patched = apply_patch(content_type, obj, patch, rtype.is_custom)
        wanted = (patched.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != before_rv:
            raise conflict(rtype.plural, target.name or "")
        validate_object(rtype, patched)
        if target.subresource == "status":
            patched = {**obj, "status": patched.get("status", {})}
        elif "status" in rtype.subresources and "status" in obj:
            patched["status"] = obj["status"]
        obj.clear()
        obj.update(patched)

    result = ctx.store.mutate(target.resource, target.name, target.namespace, change,
                              manager=manager_of(request), dry_run=dry_run)
    return _respond(ctx, target, result, dry_run)


async def _delete_options(request: web.Request) -> dict[str, Any]:
    """The optional DeleteOptions body (kubectl and the client send one)."""
    raw = await request.read()
    if not raw.strip():
        return {}
    body = await read_json(request)
    return body if isinstance(body, dict) else {}


def _check_preconditions(obj: Obj, options: dict[str, Any], target: Target) -> None:
    pre = options.get("preconditions") or {}
    metadata = obj.get("metadata") or {}
    if pre.get("uid") and pre["uid"] != metadata.get("uid"):
        raise conflict(target.rtype.plural, target.name or "")
    if pre.get("resourceVersion") and pre["resourceVersion"] != metadata.get("resourceVersion"):
        raise conflict(target.rtype.plural, target.name or "")


async def delete_object(ctx: ApiContext, target: Target, request: web.Request) -> web.Response:
    """Delete now; pods, namespaces and custom resources answer with their last state,
    other kinds with a success Status, as the real registries do."""
    assert target.name is not None
    options = await _delete_options(request)
    dry_run = is_dry_run(request, options)
    current = ctx.store.get(target.resource, target.name, target.namespace)
    if current is None:
        raise not_found(target.rtype.plural, target.name)
    _check_preconditions(current, options, target)
    gone = ctx.store.delete(target.resource, target.name, target.namespace, dry_run=dry_run)
    if target.resource == "pods" and not dry_run:
        ctx.nodeside.forget_pod(target.namespace or "", target.name)
    if target.resource in ("pods", "namespaces") or target.rtype.is_custom:
        return json_response(gone)  # these registries answer with the deleted object
    metadata = gone.get("metadata") or {}
    return json_response(success_status(200, {"name": target.name, "group": target.rtype.group,
                                              "kind": target.rtype.plural,
                                              "uid": metadata.get("uid")}))


async def delete_collection(ctx: ApiContext, target: Target,
                            request: web.Request) -> web.StreamResponse:
    """Delete every matching object; answers the list of what was deleted."""
    options = await _delete_options(request)
    dry_run = is_dry_run(request, options)
    items, _ = select(ctx, target, request)
    gone: list[Obj] = []
    for obj in items:
        metadata = obj.get("metadata") or {}
        try:
            gone.append(ctx.store.delete(target.resource, metadata.get("name", ""),
                                         metadata.get("namespace"), dry_run=dry_run))
        except ApiError as error:  # deleted meanwhile: skip it, as the real server does
            if error.code != 404:
                raise
    head = {"kind": target.rtype.list_kind, "apiVersion": target.rtype.api_version,
            "metadata": {"resourceVersion": str(ctx.store.resource_version)}}
    return await write_chunked(request, dumps(head)[:-1] + b',"items":[',
                               (dumps(o) for o in gone), b"]}", len(gone))
