"""Parse Kubernetes resource URLs into what they address.

One catch-all route parses ``/api/v1/...`` and ``/apis/<g>/<v>/...`` here instead of a route
table, because the same shape means different things by resource: ``namespaces/x/status`` is
the namespace's status subresource while ``namespaces/x/pods`` is a namespaced collection.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputui.sim.errors import ApiError, not_found
from gputui.sim.resources import ResourceType, find


@dataclass(frozen=True)
class Target:
    """What a resource URL names.

    ``namespace`` is ``None`` for cluster-scoped types and for all-namespace collections.
    ``rest`` is what follows a subresource (the path a ``pods/proxy`` request forwards).
    """

    rtype: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    rest: str = ""

    @property
    def resource(self) -> str:
        return self.rtype.key


def _page_not_found(path: str) -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {"causes": [{"reason": "UnexpectedServerResponse", "message": path}]})


def parse(group: str, version: str, segments: list[str], path: str) -> Target:
    """Turn the segments after ``/api/v1`` or ``/apis/<g>/<v>`` into a :class:`Target`."""
    namespace: str | None = None
    if len(segments) >= 3 and segments[0] == "namespaces":
        candidate = find(group, version, segments[2])
        if candidate is not None and candidate.namespaced:
            namespace = segments[1]
            segments = segments[2:]
    if not segments:
        raise _page_not_found(path)
    rtype = find(group, version, segments[0])
    if rtype is None:
        raise _page_not_found(path)
    if namespace is not None and not rtype.namespaced:
        raise _page_not_found(path)
    name = segments[1] if len(segments) > 1 else None
    sub = segments[2] if len(segments) > 2 else None
    rest = "/".join(segments[3:])
    if sub is not None and sub not in rtype.subresources:
        raise _page_not_found(path)
    if sub is None and len(segments) > 3:
        raise _page_not_found(path)
    if name == "":
        raise not_found(rtype.plural, "")
    return Target(rtype, namespace, name, sub, rest)
