"""``/openapi/v2`` (minimal) and ``/openapi/v3`` (the schemas ``kubectl explain`` reads).

v2: kubectl 1.20 validates and applies with it.

kubectl asks for the protobuf form of the OpenAPI v2 document and looks each kind up in it;
a kind it cannot find is simply not validated client-side (the server still validates).
So an (almost) empty document, with only ``swagger`` and ``info``, is enough: it is served
hand-encoded as protobuf to kubectl and as JSON to everyone else.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

from aiohttp import web

from gputui.sim.apiserver.common import dumps, json_bytes_response, json_response
from gputui.sim.apiserver.discovery import VERSION_INFO
from gputui.sim.apiserver.openapi_core import META_SCHEMAS, NODE_SCHEMAS
from gputui.sim.apiserver.openapi_dsl import REF_PREFIX, Schema, refs_in
from gputui.sim.apiserver.openapi_groups import (
    APPS_SCHEMAS,
    AUTHN_SCHEMAS,
    AUTHZ_SCHEMAS,
    POLICY_SCHEMAS,
)
from gputui.sim.apiserver.openapi_nvidia import NVIDIA_V1, NVIDIA_V1ALPHA1
from gputui.sim.apiserver.openapi_pods import POD_SCHEMAS
from gputui.sim.errors import ApiError
from gputui.sim.resources import RESOURCE_TYPES, ResourceType

# kubectl asks for application/com.github.proto-openapi.spec.v2@v1.0+protobuf, but Go's
# mime parser rejects the '@' in a response Content-Type; real servers answer octet-stream.
PROTOBUF_TYPE = "application/octet-stream"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2); payloads here are < 128 bytes."""
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def protobuf_document() -> bytes:
    """``openapi_v2.Document{swagger: "2.0", info: {title, version}}`` in protobuf."""
    info = _field(1, b"Kubernetes") + _field(2, VERSION_INFO["gitVersion"].encode())
    return _field(1, b"2.0") + _field(2, info)


def json_document() -> dict[str, object]:
    return {"swagger": "2.0", "info": {"title": "Kubernetes",
                                       "version": VERSION_INFO["gitVersion"]},
            "paths": {}, "definitions": {}}


async def openapi_v2(request: web.Request) -> web.Response:
    if "protobuf" in request.headers.get("Accept", ""):
        return web.Response(body=protobuf_document(), headers={"Content-Type": PROTOBUF_TYPE})
    return json_response(json_document())


# OpenAPI v3: one document per group version, named as kube-apiserver names them.
_GROUP_VERSIONS: dict[str, dict[str, Schema]] = {
    "api/v1": {**NODE_SCHEMAS, **POD_SCHEMAS},
    "apis/apps/v1": APPS_SCHEMAS,
    "apis/policy/v1": POLICY_SCHEMAS,
    "apis/authorization.k8s.io/v1": AUTHZ_SCHEMAS,
    "apis/authentication.k8s.io/v1": AUTHN_SCHEMAS,
    "apis/nvidia.com/v1": NVIDIA_V1,
    "apis/nvidia.com/v1alpha1": NVIDIA_V1ALPHA1,
}
_ALL: dict[str, Schema] = {**META_SCHEMAS, **NODE_SCHEMAS, **POD_SCHEMAS, **APPS_SCHEMAS,
                           **POLICY_SCHEMAS, **AUTHZ_SCHEMAS, **AUTHN_SCHEMAS}


def served_group_versions() -> list[str]:
    """The v3 paths of the group versions the server serves (``api/v1``, ``apis/g/v``)."""
    seen: list[str] = []
    for rtype in RESOURCE_TYPES:
        path = _v3_path(rtype)
        if path in _GROUP_VERSIONS and path not in seen:
            seen.append(path)
    return seen


def _with_references(schemas: dict[str, Schema]) -> dict[str, Schema]:
    """``schemas`` plus every component they reach, so the document stands alone."""
    out = dict(schemas)
    pending = [name for schema in schemas.values() for name in refs_in(schema)]
    while pending:
        name = pending.pop()
        if name not in out:
            out[name] = _ALL[name]
            pending.extend(refs_in(out[name]))
    return dict(sorted(out.items()))


def _schema_name(schemas: dict[str, Schema], rtype: ResourceType) -> str:
    """The component carrying the resource's kind (by its group-version-kind tag)."""
    wanted = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    return next(name for name, schema in schemas.items()
                if wanted in schema.get("x-kubernetes-group-version-kind", []))


def _operation(action: str, rtype: ResourceType, schema: str) -> dict[str, Any]:
    """One path operation: kubectl explain maps a resource to its kind through the
    operation's ``x-kubernetes-group-version-kind``."""
    return {
        "operationId": f"{action}{rtype.kind}", "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rtype.group, "version": rtype.version,
                                            "kind": rtype.kind},
        "responses": {"200": {"description": "OK", "content": {"application/json": {
            "schema": {"$ref": REF_PREFIX + schema}}}}},
    }


def _paths(path: str, schemas: dict[str, Schema]) -> dict[str, Any]:
    """The resource paths of one group version (``/api/v1/nodes``, ``.../{name}``)."""
    out: dict[str, Any] = {}
    for rtype in RESOURCE_TYPES:
        if _v3_path(rtype) != path:
            continue
        schema = _schema_name(schemas, rtype)
        scope = "/namespaces/{namespace}" if rtype.namespaced else ""
        collection = f"/{path}{scope}/{rtype.plural}"
        if rtype.verbs == ("create",):
            out[collection] = {"post": _operation("post", rtype, schema)}
            continue
        out[collection] = {"get": _operation("list", rtype, schema)}
        out[collection + "/{name}"] = {"get": _operation("get", rtype, schema),
                                       "patch": _operation("patch", rtype, schema)}
    return out


def _v3_path(rtype: ResourceType) -> str:
    return f"apis/{rtype.group}/{rtype.version}" if rtype.group else f"api/{rtype.version}"


@cache
def v3_document(path: str) -> bytes:
    """The OpenAPI 3.0 document of one group version, encoded once."""
    document: dict[str, Any] = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
        "paths": _paths(path, _GROUP_VERSIONS[path]),
        "components": {"schemas": _with_references(_GROUP_VERSIONS[path])},
    }
    return dumps(document)


def v3_index() -> dict[str, Any]:
    """``/openapi/v3``: where each group version's document is, with a content hash."""
    paths = {}
    for path in served_group_versions():
        digest = hashlib.sha512(v3_document(path)).hexdigest().upper()
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


async def openapi_v3(request: web.Request) -> web.Response:
    tail = request.match_info.get("tail", "").strip("/")
    if not tail:
        return json_response(v3_index())
    if tail not in served_group_versions():
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    return json_bytes_response(v3_document(tail))


def add_openapi_v3_routes(app: web.Application) -> None:
    app.router.add_get("/openapi/v3", openapi_v3)
    app.router.add_get("/openapi/v3/{tail:.*}", openapi_v3)
