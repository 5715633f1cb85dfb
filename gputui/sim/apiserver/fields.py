"""Field selectors each resource supports, as the real API server's field label conversions.

Anything else is a 400 ``field label not supported``, which is what clients see on a real
cluster, so a tool that relies on an unsupported field fails here first.
"""

from __future__ import annotations

from gputui.sim.resources import ResourceType
from gputui.sim.selectors import field_predicate

_COMMON = frozenset({"metadata.name", "metadata.namespace"})

SUPPORTED: dict[str, frozenset[str]] = {
    "pods": _COMMON | {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                       "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                       "status.podIP", "status.nominatedNodeName"},
    "nodes": _COMMON | {"spec.unschedulable"},
    "events": _COMMON | {"involvedObject.kind", "involvedObject.namespace",
                         "involvedObject.name", "involvedObject.uid",
                         "involvedObject.apiVersion", "involvedObject.resourceVersion",
                         "involvedObject.fieldPath", "reason", "reportingComponent",
                         "type"},
    "namespaces": _COMMON | {"status.phase"},
}


def allowed_fields(rtype: ResourceType) -> frozenset[str]:
    return SUPPORTED.get(rtype.key, _COMMON)


def check_field_selector(rtype: ResourceType, selector: str | None) -> None:
    """Raise 400 for a malformed selector or a field this resource cannot select on."""
    if selector:
        field_predicate(selector, allowed_fields(rtype))
