"""The cluster's input (:class:`~gputui.domain.inputs.ClusterObjects`) as JSON, and back.

A recording holds the domain's input, not snapshots (:mod:`gputui.sources.tape.format`):
its writer records the small cluster-wide fields in this form, and its reader turns them
back into the objects a :class:`~gputui.domain.snapshot.SnapshotBuilder` is given. Tuple
keys (a pod's namespace and name) become ``[ns, name, obj]`` triples; XIDs and GPU health
become rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gputui.domain.inputs import ClusterObjects, JsonDict, XidEvent
from gputui.domain.pods import PodInfo, pod_to_dict
from gputui.sources.tape.health import health_from_json, health_to_json


def _keyed(mapping: Mapping[tuple[str, str], JsonDict]) -> list[list[Any]]:
    return [[ns, name, obj] for (ns, name), obj in sorted(mapping.items())]


def objects_to_json(objects: ClusterObjects) -> dict[str, Any]:
    """A JSON-ready dict of ``objects`` (tuple keys become ``[ns, name, obj]`` triples)."""
    return {
        "nodes": dict(sorted(objects.nodes.items())),
        "pods": _keyed({key: pod_to_dict(pod) if isinstance(pod, PodInfo) else pod
                        for key, pod in objects.pods.items()}),
        "daemonsets": dict(sorted(objects.daemonsets.items())),
        "cluster_policies": list(objects.cluster_policies),
        "nvidia_drivers": list(objects.nvidia_drivers),
        "configmaps": _keyed(objects.configmaps),
        "events": list(objects.events),
        "label_times": {k: dict(v) for k, v in sorted(objects.label_times.items())},
        "operator_namespace": objects.operator_namespace,
        "context": objects.context,
        "server": objects.server,
        "forbidden": sorted(objects.forbidden),
        "unreadable": dict(sorted(objects.unreadable.items())),
        "xids": {node: [_xid_row(x) for x in xids] for node, xids in sorted(objects.xids.items())},
        "loading": sorted(objects.loading),
        "gpu_health": {node: health_to_json(h)
                       for node, h in sorted(objects.gpu_health.items())},
        # null: no budget list in the input (not "no budgets"), as older files hold none
        "disruption_budgets": (None if objects.disruption_budgets is None
                               else list(objects.disruption_budgets)),
    }


def objects_from_json(data: Mapping[str, Any]) -> ClusterObjects:
    """The inverse of :func:`objects_to_json` (a shape it does not expect raises
    ``TypeError``/``ValueError``/``KeyError``: callers reading a file say it is damaged)."""
    return ClusterObjects(
        nodes=dict(data.get("nodes") or {}),
        pods={(ns, name): obj for ns, name, obj in data.get("pods") or []},
        daemonsets=dict(data.get("daemonsets") or {}),
        cluster_policies=tuple(data.get("cluster_policies") or ()),
        nvidia_drivers=tuple(data.get("nvidia_drivers") or ()),
        configmaps={(ns, name): obj for ns, name, obj in data.get("configmaps") or []},
        events=tuple(data.get("events") or ()),
        label_times={k: dict(v) for k, v in (data.get("label_times") or {}).items()},
        operator_namespace=data.get("operator_namespace"),
        context=str(data.get("context") or ""),
        server=str(data.get("server") or ""),
        forbidden=frozenset(data.get("forbidden") or ()),
        unreadable={str(k): str(v) for k, v in (data.get("unreadable") or {}).items()},
        xids={node: tuple(_xid(x) for x in xids)
              for node, xids in (data.get("xids") or {}).items()},
        loading=frozenset(str(r) for r in data.get("loading") or ()),
        gpu_health={str(node): health_from_json(row)
                    for node, row in (data.get("gpu_health") or {}).items()},
        disruption_budgets=_budgets(data.get("disruption_budgets")),
    )


def _budgets(raw: Any) -> tuple[JsonDict, ...] | None:
    """The budget list; None where the file has none (written before gputui read budgets):
    which budget held a pod is then "not read", never "none"."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise ValueError("disruption_budgets holds something other than objects")
    return tuple(raw)


def _xid_row(event: XidEvent) -> list[Any]:
    """One XID as a row: what a replay grades from (every XID of the lookback, each with
    when it was first and last seen, its count and the GPU's pods), not just the last."""
    row: list[Any] = [event.gpu, event.xid, event.when, event.message, event.before]
    if event.last_seen or event.count or event.pods:
        row += [event.last_seen, event.count, event.count_window, list(event.pods)]
    return row


def _xid(row: Sequence[Any]) -> XidEvent:
    """``[gpu, xid, when, message]`` (older files), with ``before`` as a fifth element, and
    ``last_seen, count, count_window, pods`` after it (files of XID histories)."""
    gpu, xid, when, message = row[:4]
    extra, defaults = tuple(row[5:9]), (0.0, 0, 0.0, ())  # a shorter row: the rest unknown
    last_seen, count, window, pods = extra + defaults[len(extra):]
    return XidEvent(int(gpu), int(xid), float(when), str(message),
                    bool(row[4]) if len(row) > 4 else False, float(last_seen), int(count),
                    float(window), tuple(str(pod) for pod in pods or ()))
