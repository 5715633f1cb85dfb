"""A minimal ``/openapi/v2`` so kubectl 1.20's client-side validation and apply work.

kubectl asks for the protobuf form of the OpenAPI v2 document and looks each kind up in it;
a kind it cannot find is simply not validated client-side (the server still validates).
So an (almost) empty document, with only ``swagger`` and ``info``, is enough: it is served
hand-encoded as protobuf to kubectl and as JSON to everyone else.
"""

from __future__ import annotations

from aiohttp import web

from gputui.sim.apiserver.common import json_response
from gputui.sim.apiserver.discovery import VERSION_INFO

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
