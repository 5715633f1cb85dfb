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


#: bytes of a log's end kept: 200 lines of 8 KB (longer lines are cut by the sanitiser)
LOG_KEEP_BYTES = 2 << 20
#: bytes read at most from a log answer (a server ignoring ``tailLines`` sent 200 MB)
LOG_READ_LIMIT = 64 << 20


def read_pod_log(http: KubeHttp, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
    """The last ``tail_lines`` lines of a container's log, each cleaned (tabs kept).

    The server is asked for ``tailLines``, and what comes is bounded here too: a server
    or proxy that ignores the limit costs a stream read, never the memory of the log.
    """
    query: dict[str, Any] = {"tailLines": tail_lines}
    if container:
        query["container"] = container
    path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"
    text, size = http.get_tail(path, query, LOG_KEEP_BYTES, LOG_READ_LIMIT)
    lines = clean_log(text)
    if size > len(text.encode("utf-8", "replace")):
        lines = lines[1:]  # the kept bytes start inside a line
    if size >= LOG_READ_LIMIT and not text.endswith("\n"):
        lines = lines[:-1]  # and the read stopped inside one
    lines = lines[-tail_lines:]
    if size >= LOG_READ_LIMIT:
        lines.insert(0, f"[gputui: the server sent more than {LOG_READ_LIMIT >> 20} MB for "
                        f"{tail_lines} lines; these are the last lines read, not the log's end]")
    return lines


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
