"""The zero value of each kind, as the real API server writes it in a BOOKMARK event.

Why: kube-apiserver's watch cache makes a bookmark from an empty object of the watched type
(``cacher.go``: ``newFunc()``, then ``versioner.UpdateObject`` sets only
``metadata.resourceVersion``; a watch-list's last bookmark also gets the
``k8s.io/initial-events-end`` annotation) and encodes it like any object. Go's JSON encoder
writes every field of that empty struct that has no ``omitempty`` tag, and every struct-typed
field even with one, so a Pod bookmark is
``{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"523"},"spec":{"containers":null},"status":{}}``
(``PodSpec.Containers`` is ``json:"containers"``). A client that reads a bookmark through its
Pod shape refuses ``"containers": null``; the emulator sends what the real server sends so the
tests meet it. The bodies below follow the ``json`` tags of ``k8s.io/api`` (core/v1, apps/v1,
policy/v1); custom resources are unstructured, so their bookmark has nothing but metadata.
"""

from __future__ import annotations

import copy
from typing import Any

_NODE_INFO = dict.fromkeys(
    ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
     "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
     "architecture"), "")

#: store key -> the fields after ``metadata`` of the kind's zero value
ZERO: dict[str, dict[str, Any]] = {
    "pods": {"spec": {"containers": None}, "status": {}},
    "nodes": {"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                     "nodeInfo": _NODE_INFO}},
    "namespaces": {"spec": {}, "status": {}},
    "events": {"involvedObject": {}, "source": {}, "firstTimestamp": None,
               "lastTimestamp": None, "eventTime": None, "reportingComponent": "",
               "reportingInstance": ""},
    "configmaps": {},
    "daemonsets.apps": {
        "spec": {"selector": None, "template": {"metadata": {}, "spec": {"containers": None}},
                 "updateStrategy": {}},
        "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                   "desiredNumberScheduled": 0, "numberReady": 0}},
    "controllerrevisions.apps": {"data": None, "revision": 0},
    "poddisruptionbudgets.policy": {
        "spec": {}, "status": {"disruptionsAllowed": 0, "currentHealthy": 0,
                               "desiredHealthy": 0, "expectedPods": 0}},
}


def zero_object(key: str, kind: str, api_version: str,
                metadata: dict[str, Any]) -> dict[str, Any]:
    """The zero value of the resource ``key`` with ``metadata``, in the server's field order
    (kind, apiVersion, metadata, then the rest)."""
    head: dict[str, Any] = {"kind": kind, "apiVersion": api_version, "metadata": metadata}
    return head | copy.deepcopy(ZERO.get(key, {}))
