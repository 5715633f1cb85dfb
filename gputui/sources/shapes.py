"""The shapes gputui decodes the big lists into: only the fields it reads, as TypedDicts.

Why a module of its own: these declarations are the one statement of what gputui keeps of a
Node and a Pod. :mod:`gputui.sources.decode` decodes list pages and watch events through them
(``msgspec`` skips every other field unread), and the dict path (fixtures, tests) cuts
already-decoded objects with the same shapes, so both keep exactly the same fields. A field
the domain starts to read must be added here, or it arrives absent.
"""

from __future__ import annotations

from typing import Any, Generic, TypedDict, TypeVar

T = TypeVar("T")

# Every shape is total=False: a field the server leaves out stays out, as with json.loads.
_Labels = TypedDict("_Labels", {"f:labels": dict[str, Any]}, total=False)
_FieldsV1 = TypedDict("_FieldsV1", {"f:metadata": _Labels}, total=False)


class _ManagedEntry(TypedDict, total=False):
    time: str
    fieldsV1: _FieldsV1


class _ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    resourceVersion: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creationTimestamp: str
    deletionTimestamp: str


class _NodeMeta(_ObjectMeta, total=False):
    managedFields: list[_ManagedEntry]


class _NodeCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastTransitionTime: str


class _NodeInfo(TypedDict, total=False):
    kernelVersion: str
    osImage: str
    kubeletVersion: str
    containerRuntimeVersion: str


class _Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str


class _NodeSpec(TypedDict, total=False):
    unschedulable: bool
    taints: list[_Taint]


class _NodeStatus(TypedDict, total=False):
    conditions: list[_NodeCondition]
    capacity: dict[str, Any]
    allocatable: dict[str, Any]
    nodeInfo: _NodeInfo


class Node(TypedDict, total=False):
    metadata: _NodeMeta
    spec: _NodeSpec
    status: _NodeStatus


class _Owner(TypedDict, total=False):
    kind: str
    name: str


class _PodMeta(TypedDict, total=False):
    name: str
    namespace: str
    resourceVersion: str
    labels: dict[str, str]
    creationTimestamp: str
    deletionTimestamp: str
    ownerReferences: list[_Owner]


class _Resources(TypedDict, total=False):
    requests: dict[str, Any]
    limits: dict[str, Any]


class _Container(TypedDict, total=False):
    name: str
    resources: _Resources


class _FieldRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: list[str]


class _NodeSelectorTerm(TypedDict, total=False):
    matchFields: list[_FieldRequirement]


class _NodeSelector(TypedDict, total=False):
    nodeSelectorTerms: list[_NodeSelectorTerm]


_Required = TypedDict("_Required", {"requiredDuringSchedulingIgnoredDuringExecution":
                                    _NodeSelector}, total=False)


class _Affinity(TypedDict, total=False):
    nodeAffinity: _Required


class _PodSpec(TypedDict, total=False):
    nodeName: str
    #: where a pod not yet scheduled is pinned (validators by hostname, DaemonSet pods by
    #: affinity): how a pending operand pod is tied to its node
    nodeSelector: dict[str, str]
    affinity: _Affinity
    initContainers: list[_Container]
    containers: list[_Container]


class _PodCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    #: when ``Ready`` last turned True: how a join's stages are timed (domain/joins.py)
    lastTransitionTime: str


class _ContainerStatus(TypedDict, total=False):
    name: str
    ready: bool
    restartCount: int
    state: dict[str, dict[str, Any]]
    lastState: dict[str, dict[str, Any]]


class _PodStatus(TypedDict, total=False):
    phase: str
    reason: str
    message: str
    startTime: str
    conditions: list[_PodCondition]
    initContainerStatuses: list[_ContainerStatus]
    containerStatuses: list[_ContainerStatus]


class Pod(TypedDict, total=False):
    metadata: _PodMeta
    spec: _PodSpec
    status: _PodStatus


# "continue" is a Python keyword: the functional form declares it
_ListMetaFull = TypedDict("_ListMetaFull", {"resourceVersion": str, "continue": str},
                          total=False)


class ListPage(TypedDict, Generic[T], total=False):
    metadata: _ListMetaFull
    items: list[T]


class WatchLine(TypedDict, Generic[T], total=False):
    type: str
    object: T
