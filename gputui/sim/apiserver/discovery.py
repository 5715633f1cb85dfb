"""Discovery documents: ``/version``, ``/api``, ``/api/v1``, ``/apis`` and each group.

kubectl resolves every resource name through these, so they are generated from the same
resource table the store and the router use: a type is advertised if and only if it is served.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.resources import RESOURCE_TYPES, ResourceType
from gputui.sim.version import VERSION_INFO

__all__ = ["VERSION_INFO", "api_group", "core_versions", "group_list", "resource_list"]


# Subresource name -> (kind, verbs, group, version); group/version None = the parent's.
_SUBRESOURCES: dict[str, tuple[str | None, tuple[str, ...], str | None, str | None]] = {
    "status": (None, ("get", "patch", "update"), None, None),
    "eviction": ("Eviction", ("create",), "policy", "v1"),
    "log": ("Pod", ("get",), None, None),
    "proxy": (None, ("create", "delete", "get", "patch", "update"), None, None),
}


def _proxy_kind(rtype: ResourceType) -> str:
    return f"{rtype.kind}ProxyOptions"


def _entry(rtype: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rtype.plural, "singularName": rtype.singular, "namespaced": rtype.namespaced,
        "kind": rtype.kind, "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    return entry


def _sub_entry(rtype: ResourceType, sub: str) -> dict[str, Any]:
    kind, verbs, group, version = _SUBRESOURCES[sub]
    entry: dict[str, Any] = {
        "name": f"{rtype.plural}/{sub}", "singularName": "", "namespaced": rtype.namespaced,
        "kind": kind or (_proxy_kind(rtype) if sub == "proxy" else rtype.kind),
        "verbs": list(verbs),
    }
    if group is not None:
        entry["group"] = group
        entry["version"] = version
    return entry


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """The ``APIResourceList`` of one group version, ``None`` when not served."""
    types = [r for r in RESOURCE_TYPES if r.group == group and r.version == version]
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for rtype in types:
        resources.append(_entry(rtype))
        resources.extend(_sub_entry(rtype, sub) for sub in rtype.subresources)
    group_version = version if not group else f"{group}/{version}"
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def core_versions() -> dict[str, Any]:
    """``/api``: the legacy group's versions."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": "127.0.0.1:6443"}]}


def _versions_of(group: str) -> list[str]:
    """Versions of a group, preferred (most stable) first."""
    seen: list[str] = []
    for rtype in RESOURCE_TYPES:
        if rtype.group == group and rtype.version not in seen:
            seen.append(rtype.version)
    return sorted(seen, key=_stability, reverse=True)


def _stability(version: str) -> tuple[int, str]:
    rank = 0 if "alpha" in version else 1 if "beta" in version else 2
    return (rank, version)


def api_group(group: str) -> dict[str, Any] | None:
    """The ``APIGroup`` document of ``/apis/<group>``, ``None`` when not served."""
    versions = _versions_of(group)
    if not group or not versions:
        return None
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
            "preferredVersion": entries[0]}


def group_list() -> dict[str, Any]:
    """``/apis``: every served named group."""
    names: list[str] = []
    for rtype in RESOURCE_TYPES:
        if rtype.group and rtype.group not in names:
            names.append(rtype.group)
    groups = [api_group(name) for name in names]
    for entry in groups:
        if entry is not None:
            entry.pop("kind")
            entry.pop("apiVersion")
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
