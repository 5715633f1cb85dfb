"""A source that replays recorded cluster data: frozen input for UI tests and screenshots.

Why: Pilot tests, snapshot tests and the screenshot script must be deterministic (no live
data, no ages that move), yet see exactly what an operator sees on the emulated cluster. So
``scripts/record_scenarios.py`` reads each emulated scenario once through the one-shot reader
and writes the raw :class:`ClusterObjects` (plus a few pod logs and the emulated ``now``) to
``<directory>/<scenario>.json``; this module loads them back, builds snapshots with the
domain builder, and implements the :class:`ClusterSource` protocol over them. The product
itself replays nothing, so the directory is always the caller's (the tests keep theirs in
``tests/fixtures/scenarios``, see ``tests.fixtures.SCENARIOS``).

Headless: no textual, no HTTP. Callbacks are invoked on the caller's thread (tests push
snapshots and statuses by hand with :meth:`ReplaySource.push` / :meth:`ReplaySource.set_status`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gputui import gctuning
from gputui.domain.inputs import ClusterObjects, JsonDict, XidEvent
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.domain.pods import PodInfo, pod_to_dict
from gputui.domain.sanitize import clean_tree
from gputui.sources.base import Connection, SnapshotCallback, SourceStatus, StatusCallback
from gputui.sources.tape_health import health_from_json, health_to_json

#: the recording file format written by :meth:`Recording.to_json`
FORMAT = 1


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


def _pod_key(namespace: str, pod: str, container: str | None) -> str:
    return f"{namespace}/{pod}/{container or ''}"


@dataclass(frozen=True)
class Recording:
    """One recorded scenario: raw objects at the emulated ``now``, plus pod logs and events.

    Attributes:
        scenario: scenario name.
        objects: what the one-shot reader returned.
        now: the emulated clock when the objects were read (use it as the frozen clock).
        logs: ``"ns/pod/container"`` -> log lines (container "" for the default one).
        pod_events: ``"ns/pod"`` -> events, oldest first.
    """

    scenario: str
    objects: ClusterObjects
    now: float
    logs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    pod_events: Mapping[str, tuple[JsonDict, ...]] = field(default_factory=dict)

    def snapshot(self, now: float | None = None, thresholds: Any = None) -> ClusterSnapshot:
        """Build the domain snapshot of this recording at ``now`` (default: recorded now)."""
        from gputui.domain.snapshot import SnapshotBuilder

        builder = SnapshotBuilder(thresholds) if thresholds is not None else SnapshotBuilder()
        with gctuning.paused():  # as every caller of a build does (gctuning's rule)
            snapshot: ClusterSnapshot = builder.build(self.objects,
                                                      self.now if now is None else now)
        return snapshot

    def to_json(self) -> dict[str, Any]:
        """The fixture file's content."""
        return {"format": FORMAT, "scenario": self.scenario, "now": self.now,
                "objects": objects_to_json(self.objects),
                "logs": {k: list(v) for k, v in sorted(self.logs.items())},
                "pod_events": {k: list(v) for k, v in sorted(self.pod_events.items())}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recording:
        """Read a fixture file's content, every string cleaned (a recording may come from
        anywhere)."""
        data = clean_tree(dict(data))
        return cls(scenario=str(data.get("scenario", "")),
                   objects=objects_from_json(data.get("objects") or {}),
                   now=float(data.get("now") or 0.0),
                   logs={k: tuple(v) for k, v in (data.get("logs") or {}).items()},
                   pod_events={k: tuple(v) for k, v in (data.get("pod_events") or {}).items()})


def load_recording(scenario: str, directory: Path) -> Recording:
    """Load ``<directory>/<scenario>.json`` (a name) or a path to a recording file."""
    path = Path(scenario) if scenario.endswith(".json") else directory / f"{scenario}.json"
    return Recording.from_json(json.loads(path.read_text()))


class ReplaySource:
    """A :class:`~gputui.sources.base.ClusterSource` over given snapshots.

    Args:
        snapshots: delivered in order; the first on :meth:`start`, the rest by :meth:`push`
            (or all at once with ``deliver_all=True``).
        logs / pod_events: what :meth:`pod_log` / :meth:`pod_events` return.
        status: the status reported on start (default: live, context/server of the
            first snapshot).
    """

    def __init__(self, snapshots: Sequence[ClusterSnapshot] = (), *,
                 logs: Mapping[str, Sequence[str]] | None = None,
                 pod_events: Mapping[str, Sequence[JsonDict]] | None = None,
                 status: SourceStatus | None = None, last_update: float = 0.0) -> None:
        self.snapshots = list(snapshots)
        self.logs = dict(logs or {})
        self.events = dict(pod_events or {})
        first = self.snapshots[0] if self.snapshots else EMPTY_SNAPSHOT
        self.status = status or SourceStatus(Connection.LIVE, context=first.context,
                                             server=first.server,
                                             last_update=last_update or first.generated_at)
        self.latest: ClusterSnapshot = first
        self.started = False
        self.stopped = False
        self.reads: list[tuple[str, str, str | None]] = []
        self._on_snapshot: SnapshotCallback | None = None
        self._on_status: StatusCallback | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_recording(cls, recording: Recording,
                       extra: Sequence[ClusterSnapshot] = ()) -> ReplaySource:
        """A source whose first snapshot is ``recording``'s, built at its ``now``."""
        return cls([recording.snapshot(), *extra], logs=recording.logs,
                   pod_events=recording.pod_events, last_update=recording.now)

    def start(self, on_snapshot: SnapshotCallback, on_status: StatusCallback) -> None:
        """Report the status, then deliver the first snapshot (on the caller's thread)."""
        self._on_snapshot, self._on_status = on_snapshot, on_status
        self.started = True
        on_status(self.status)
        if self.snapshots:
            on_snapshot(self.snapshots[0])

    def push(self, snapshot: ClusterSnapshot) -> None:
        """Deliver another snapshot now (tests: rows change, disappear, appear).

        Pushed snapshots are not kept (a benchmark pushes thousands); ``latest`` is.
        """
        self.latest = snapshot
        if self._on_snapshot is not None and not self.stopped:
            self._on_snapshot(snapshot)

    def set_status(self, status: SourceStatus) -> None:
        """Report a new connection status now (tests: "stale since", "disconnected")."""
        self.status = status
        if self._on_status is not None and not self.stopped:
            self._on_status(status)

    def stop(self) -> None:
        """Stop delivering; idempotent."""
        self.stopped = True

    def pod_log(self, namespace: str, pod: str, container: str | None = None,
                tail_lines: int = 200) -> list[str]:
        """Recorded lines for the container (or the pod's first recorded container)."""
        with self._lock:
            self.reads.append((namespace, pod, container))
        lines = self.logs.get(_pod_key(namespace, pod, container))
        if lines is None:
            prefix = f"{namespace}/{pod}/"
            lines = next((v for k, v in sorted(self.logs.items()) if k.startswith(prefix)), ())
        return list(lines)[-tail_lines:]

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        """Recorded events of the pod, oldest first."""
        return [dict(e) for e in self.events.get(f"{namespace}/{pod}", ())]


def log_key(namespace: str, pod: str, container: str | None) -> str:
    """The key :class:`Recording.logs` uses (``ns/pod/container``)."""
    return _pod_key(namespace, pod, container)


OnSnapshot = Callable[[ClusterSnapshot], None]

__all__ = ["Recording", "ReplaySource", "load_recording",
           "log_key", "objects_from_json", "objects_to_json"]
