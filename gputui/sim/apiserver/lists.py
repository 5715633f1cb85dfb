"""List responses: selectors, ``limit``/``continue`` paging and chunked writing.

A list of 5,000 GPU nodes is tens of megabytes, so items are written from their cached bytes
in chunks of about 256 KiB instead of one joined string, and paging re-slices the store's
sorted snapshot from the last key in a stable continue token.
"""

from __future__ import annotations

import base64
import bisect
import json
from typing import Any

from aiohttp import web

from gputui.sim.apiserver.common import ApiContext, dumps, int_param
from gputui.sim.apiserver.fields import check_field_selector
from gputui.sim.apiserver.paths import Target
from gputui.sim.apiserver.tables import table_head, table_row, wants_table
from gputui.sim.apiserver.watchlist import check_list_options
from gputui.sim.errors import ApiError, bad_request
from gputui.sim.store import Obj

CHUNK = 256 * 1024
STREAM_ABOVE = 64  # items; smaller lists go out as one plain response with a length


def encode_continue(rv: str, namespace: str, name: str) -> str:
    raw = json.dumps({"rv": rv, "ns": namespace, "name": name}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[str, tuple[str, str]]:
    """The list resourceVersion and the last key a continue token carries; 400 if garbled."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return str(data["rv"]), (str(data["ns"]), str(data["name"]))
    except (ValueError, KeyError, TypeError):
        raise bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1)") from None


def _key(obj: Obj) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")


def select(ctx: ApiContext, target: Target, request: web.Request) -> tuple[list[Obj], int]:
    """The matching objects (sorted) and the store's resourceVersion; 400 on bad selectors."""
    fields = request.query.get("fieldSelector")
    check_field_selector(target.rtype, fields)
    return ctx.store.list(target.resource, target.namespace,
                          label_selector=request.query.get("labelSelector"),
                          field_selector=fields)


def page(items: list[Obj], rv: int, request: web.Request) -> tuple[list[Obj], dict[str, Any]]:
    """Apply ``continue`` and ``limit``; returns the page and the list metadata."""
    list_rv = str(rv)
    token = request.query.get("continue")
    if token:
        list_rv, start = decode_continue(token)
        items = items[bisect.bisect_right(items, start, key=_key):]
    limit = int_param(request, "limit")
    metadata: dict[str, Any] = {"resourceVersion": list_rv}
    if limit is not None and limit > 0 and len(items) > limit:
        remaining = len(items) - limit
        items = items[:limit]
        last = _key(items[-1])
        metadata["continue"] = encode_continue(list_rv, last[0], last[1])
        metadata["remainingItemCount"] = remaining
    return items, metadata


def _head(target: Target, metadata: dict[str, Any]) -> bytes:
    rtype = target.rtype
    head = {"kind": rtype.list_kind, "apiVersion": rtype.api_version, "metadata": metadata}
    return dumps(head)[:-1] + b',"items":['


async def list_response(ctx: ApiContext, target: Target,
                        request: web.Request) -> web.StreamResponse:
    """Answer a list (plain or as a Table) for a collection URL."""
    check_list_options(request)
    items, rv = select(ctx, target, request)
    items, metadata = page(items, rv, request)
    accept = request.headers.get("Accept", "")
    include = request.query.get("includeObject", "Object")
    now = ctx.store.clock.now()
    resource = target.resource
    if wants_table(accept):
        head = table_head(resource, accept, metadata)
        pieces = (table_row(resource, obj, None if include == "None" else
                            ctx.cache.encode(resource, obj), now) for obj in items)
        return await write_chunked(request, head, pieces, b"]}", len(items))
    return await write_chunked(request, _head(target, metadata),
                               (ctx.cache.encode(resource, obj) for obj in items), b"]}",
                               len(items))


async def write_chunked(request: web.Request, head: bytes, pieces: Any, tail: bytes,
                        count: int) -> web.StreamResponse:
    """Write ``head`` + comma-joined ``pieces`` + ``tail``; streamed when the list is big."""
    if count <= STREAM_ABOVE:
        body = head + b",".join(pieces) + tail
        return web.Response(body=body, content_type="application/json")
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    buffer = [head]
    size = len(head)
    first = True
    for piece in pieces:
        if not first:
            buffer.append(b",")
        first = False
        buffer.append(piece)
        size += len(piece) + 1
        if size >= CHUNK:
            await response.write(b"".join(buffer))
            buffer, size = [], 0
    buffer.append(tail)
    await response.write(b"".join(buffer))
    await response.write_eof()
    return response


def single_table(ctx: ApiContext, target: Target, obj: Obj, accept: str) -> bytes:
    """A one-row Table for ``kubectl get <kind> <name>``."""
    metadata = {"resourceVersion": str((obj.get("metadata") or {}).get("resourceVersion", ""))}
    row = table_row(target.resource, obj, ctx.cache.encode(target.resource, obj),
                    ctx.store.clock.now())
    return table_head(target.resource, accept, metadata) + row + b"]}"


def raise_for_collection_write(target: Target) -> None:
    """Creating through an all-namespaces URL of a namespaced type is not allowed."""
    if target.rtype.namespaced and target.namespace is None:
        raise ApiError(405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource")
