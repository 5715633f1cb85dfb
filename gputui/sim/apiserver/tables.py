"""``Table`` responses (``Accept: application/json;as=Table;g=meta.k8s.io``) for kubectl get.

The real server computes the cells (including human ages such as ``5d3h``) so kubectl prints
the same columns it prints against a real cluster. Rows embed each object's cached bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gputui.sim.apiserver.common import dumps
from gputui.sim.apiserver.table_cells import (
    age,
    daemonset_cells,
    event_cells,
    node_cells,
    pod_cells,
)

Cells = Callable[[dict[str, Any], float], list[Any]]
Column = tuple[str, str, int]  # name, type, priority

_NAME: Column = ("Name", "string", 0)
_AGE: Column = ("Age", "string", 0)

COLUMNS: dict[str, list[Column]] = {
    "nodes": [_NAME, ("Status", "string", 0), ("Roles", "string", 0), _AGE,
              ("Version", "string", 0), ("Internal-IP", "string", 1),
              ("External-IP", "string", 1), ("OS-Image", "string", 1),
              ("Kernel-Version", "string", 1), ("Container-Runtime", "string", 1)],
    "pods": [_NAME, ("Ready", "string", 0), ("Status", "string", 0),
             ("Restarts", "string", 0), _AGE, ("IP", "string", 1), ("Node", "string", 1),
             ("Nominated Node", "string", 1), ("Readiness Gates", "string", 1)],
    "daemonsets.apps": [_NAME, ("Desired", "integer", 0), ("Current", "integer", 0),
                        ("Ready", "integer", 0), ("Up-to-date", "integer", 0),
                        ("Available", "integer", 0), ("Node Selector", "string", 0), _AGE,
                        ("Containers", "string", 1), ("Images", "string", 1),
                        ("Selector", "string", 1)],
    "events": [("Last Seen", "string", 0), ("Type", "string", 0), ("Reason", "string", 0),
               ("Object", "string", 0), ("Message", "string", 0)],
    "clusterpolicies.nvidia.com": [_NAME, ("Status", "string", 0), _AGE],
    "nvidiadrivers.nvidia.com": [_NAME, ("Status", "string", 0), _AGE],
    "namespaces": [_NAME, ("Status", "string", 0), _AGE],
    "configmaps": [_NAME, ("Data", "integer", 0), _AGE],
    "poddisruptionbudgets.policy": [_NAME, ("Min Available", "string", 0),
                                    ("Max Unavailable", "string", 0),
                                    ("Allowed Disruptions", "integer", 0), _AGE],
    "controllerrevisions.apps": [_NAME, ("Controller", "string", 0),
                                 ("Revision", "integer", 0), _AGE],
}


def _meta_age(obj: dict[str, Any], now: float) -> str:
    return age((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _state_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), (obj.get("status") or {}).get("state", ""), _meta_age(obj, now)]


def _pdb_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    return [_name(obj), str(spec.get("minAvailable", "N/A")),
            str(spec.get("maxUnavailable", "N/A")),
            (obj.get("status") or {}).get("disruptionsAllowed", 0), _meta_age(obj, now)]


def _revision_cells(obj: dict[str, Any], now: float) -> list[Any]:
    owners = (obj.get("metadata") or {}).get("ownerReferences") or [{}]
    owner = owners[0]
    controller = f"{owner.get('kind', '').lower()}.apps/{owner.get('name', '')}" if owner else ""
    return [_name(obj), controller if owner.get("name") else "<none>",
            obj.get("revision", 0), _meta_age(obj, now)]


CELLS: dict[str, Cells] = {
    "nodes": node_cells,
    "pods": pod_cells,
    "daemonsets.apps": daemonset_cells,
    "events": event_cells,
    "clusterpolicies.nvidia.com": _state_cells,
    "nvidiadrivers.nvidia.com": _state_cells,
    "namespaces": lambda o, n: [_name(o), (o.get("status") or {}).get("phase", "Active"),
                                _meta_age(o, n)],
    "configmaps": lambda o, n: [_name(o), len(o.get("data") or {}) +
                                len(o.get("binaryData") or {}), _meta_age(o, n)],
    "poddisruptionbudgets.policy": _pdb_cells,
    "controllerrevisions.apps": _revision_cells,
}


def wants_table(accept: str) -> bool:
    """Whether the client asked for a meta.k8s.io Table (v1 or v1beta1) first."""
    first = accept.split(",", 1)[0].replace(" ", "")
    return "as=Table" in first and "g=meta.k8s.io" in first


def table_version(accept: str) -> str:
    first = accept.split(",", 1)[0].replace(" ", "")
    return "meta.k8s.io/v1beta1" if "v=v1beta1" in first else "meta.k8s.io/v1"


def _definitions(resource: str) -> list[dict[str, Any]]:
    columns = COLUMNS.get(resource, [_NAME, _AGE])
    return [{"name": name, "type": kind, "format": "name" if name == "Name" else "",
             "description": name, "priority": priority} for name, kind, priority in columns]


def cells_for(resource: str, obj: dict[str, Any], now: float) -> list[Any]:
    convert = CELLS.get(resource)
    return convert(obj, now) if convert else [_name(obj), _meta_age(obj, now)]


def table_head(resource: str, accept: str, metadata: dict[str, Any]) -> bytes:
    """Everything of a Table before its rows, ending with ``"rows":[``."""
    head = {"kind": "Table", "apiVersion": table_version(accept), "metadata": metadata,
            "columnDefinitions": _definitions(resource)}
    return dumps(head)[:-1] + b',"rows":['


def table_row(resource: str, obj: dict[str, Any], obj_bytes: bytes | None,
              now: float) -> bytes:
    """One row; ``obj_bytes`` None leaves the object out (``includeObject=None``)."""
    cells = dumps(cells_for(resource, obj, now))
    if obj_bytes is None:
        return b'{"cells":' + cells + b"}"
    return b'{"cells":' + cells + b',"object":' + obj_bytes + b"}"
