"""Response content negotiation: JSON for every client that accepts it, 406 for the rest.

kubectl 1.35 asks for ``application/vnd.kubernetes.protobuf,application/json``; a real server
answers built-in kinds in protobuf and custom resources in JSON, the second choice. This
server writes JSON only, so it does what a real one does for a CRD: JSON whenever the Accept
header allows it, and ``406 NotAcceptable`` when the client accepts protobuf (or anything
else) alone.
"""

from __future__ import annotations

from aiohttp import web

from gputui.sim.errors import ApiError

_JSON_OK = ("application/json", "application/*", "*/*", "")


def accepts_json(accept: str) -> bool:
    """Whether an Accept header admits JSON (a missing header admits anything)."""
    for clause in accept.split(","):
        media, _, params = clause.partition(";")
        if media.strip().lower() not in _JSON_OK:
            continue
        quality = next((p.split("=", 1)[1] for p in params.split(";")
                        if p.strip().startswith("q=")), "1")
        try:
            if float(quality) > 0:
                return True
        except ValueError:
            return True
    return False


def require_json_acceptable(request: web.Request) -> None:
    """Raise the 406 a real server gives when no acceptable media type can be written."""
    if not accepts_json(request.headers.get("Accept", "")):
        raise ApiError(406, "NotAcceptable", "only the following media types are accepted: "
                       "application/json")
