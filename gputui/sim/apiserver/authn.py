"""Bearer-token authentication, for tests and drills that need a server that checks it.

By default the emulated API server takes every request (its kubeconfig's token is a
placeholder). With ``EmulatedCluster(tokens=...)`` or :meth:`EmulatedCluster.set_tokens`
it accepts only ``Authorization: Bearer <token>`` with one of those tokens, and answers
anything else as a real kube-apiserver does: 401 with an ``Unauthorized`` Status. Tests use
it to prove that a token file ending in a newline is sent trimmed, and that an exec
plugin's short-lived tokens are the ones sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Tokens:
    """The tokens in force; ``None`` accepts any request (the default)."""

    accepted: frozenset[str] | None = None


AUTHN_KEY = web.AppKey("gputui-sim-authn", Tokens)

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


@web.middleware
async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """401 for a request without an accepted bearer token, when tokens are in force."""
    tokens = request.app.get(AUTHN_KEY)
    if tokens is None or tokens.accepted is None:
        return await handler(request)
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or value not in tokens.accepted:
        return web.json_response(UNAUTHORIZED, status=401)
    return await handler(request)
