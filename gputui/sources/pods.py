"""On-demand reads for the UI's pod panes: a container's log tail and a pod's events.

Blocking by design: the UI runs them in a worker thread when the operator opens a pane,
so they never sit on the snapshot path.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from gputui.domain.sanitize import clean_log
from gputui.sources.http import KubeHttp
from gputui.sources.reduce import parse_time, reduce_event


def read_pod_log(http: KubeHttp, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
    """The last ``tail_lines`` lines of a container's log, each cleaned (tabs kept)."""
    query: dict[str, Any] = {"tailLines": tail_lines}
    if container:
        query["container"] = container
    path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"
    return clean_log(http.get_text(path, query))


def _event_time(event: dict[str, Any]) -> float:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        when = parse_time(event.get(key))
        if when is not None:
            return when
    return parse_time((event.get("metadata") or {}).get("creationTimestamp")) or 0.0


def read_pod_events(http: KubeHttp, namespace: str, pod: str) -> list[dict[str, Any]]:
    """Events about one pod, oldest first, reduced to what a timeline shows."""
    selector = f"involvedObject.kind=Pod,involvedObject.name={pod}"
    document = http.get(f"/api/v1/namespaces/{quote(namespace)}/events",
                        {"fieldSelector": selector})
    events = [reduce_event(item)[0] for item in document.get("items") or []]
    return sorted(events, key=_event_time)
