"""The resource types the emulated API server serves, and how each is keyed in the store.

One table drives the store, discovery and routing, so a resource exists everywhere or nowhere.
The store key of a type is ``plural`` for the core group and ``plural.group`` otherwise
(``nodes``, ``daemonsets.apps``, ``clusterpolicies.nvidia.com``), as kubectl spells them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One API resource: where it lives, what it is called and what can be done with it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    is_custom: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.plural if not self.group else f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return self.version if not self.group else f"{self.group}/{self.version}"

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


RESOURCE_TYPES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "Namespace", False, "namespace", ("ns",),
                 subresources=("status",)),
    ResourceType("", "v1", "nodes", "Node", False, "node", ("no",),
                 subresources=("status", "proxy")),
    ResourceType("", "v1", "pods", "Pod", True, "pod", ("po",),
                 subresources=("status", "eviction", "log", "proxy"), categories=("all",)),
    ResourceType("", "v1", "events", "Event", True, "event", ("ev",)),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",)),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True, "daemonset", ("ds",),
                 subresources=("status",), categories=("all",)),
    ResourceType("apps", "v1", "controllerrevisions", "ControllerRevision", True,
                 "controllerrevision"),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True,
                 "poddisruptionbudget", ("pdb",), subresources=("status",)),
    ResourceType("nvidia.com", "v1", "clusterpolicies", "ClusterPolicy", False, "clusterpolicy",
                 subresources=("status",), is_custom=True),
    ResourceType("nvidia.com", "v1alpha1", "nvidiadrivers", "NVIDIADriver", False,
                 "nvidiadriver", ("nvd", "nvdriver", "nvdrivers"), subresources=("status",),
                 is_custom=True),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectaccessreviews",
                 "SelfSubjectAccessReview", False, "selfsubjectaccessreview", verbs=("create",)),
    ResourceType("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview",
                 False, "selfsubjectreview", verbs=("create",)),
)

BY_KEY: dict[str, ResourceType] = {r.key: r for r in RESOURCE_TYPES}


def resource_type(key: str) -> ResourceType:
    """Look a resource type up by its store key; ``KeyError`` names the unknown key."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown resource {key!r}") from None


def find(group: str, version: str, plural: str) -> ResourceType | None:
    """The resource served at ``/apis/<group>/<version>/<plural>`` (core: group ``""``)."""
    for rtype in RESOURCE_TYPES:
        if rtype.group == group and rtype.version == version and rtype.plural == plural:
            return rtype
    return None
