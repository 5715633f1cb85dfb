"""What the UI needs from a source of cluster data, independent of where it comes from.

The TUI is built with ``make_app(settings, source)``; the CLI passes a live source (the
list+watch cache over the Kubernetes API), tests and the screenshot script pass a source
that replays frozen snapshots. Sources run their own threads or tasks and call the two
callbacks from there; the UI turns each call into a message, never touching widgets from a
foreign thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from gputui.domain.replay_cursor import PlayState
from gputui.domain.sanitize import clean_line


class Connection(Enum):
    """Where the link to the cluster stands."""

    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    FAILED = "failed"
    #: ``gputui replay``: a recording, never the cluster as it is now
    REPLAY = "replay"


@dataclass(frozen=True)
class SourceStatus:
    """Connection state and data age, for the header's "live" / "stale since ..." line."""

    connection: Connection
    context: str = ""
    server: str = ""
    #: epoch seconds of the last successful update; 0 before the first
    last_update: float = 0.0
    #: epoch seconds since which the data has been stale (connection lost); 0 when live
    stale_since: float = 0.0
    #: one line saying what is wrong ("connection refused, retrying in 4 s"), or ""
    message: str = ""
    #: resources that answered 403, e.g. ``("events",)``: those parts say "forbidden"
    forbidden: tuple[str, ...] = ()
    #: a request being retried right now ("429 Too Many Requests; retrying (Retry-After 1 s,
    #: attempt 2)"), or "": the data is still current, the server is struggling
    retrying: str = ""
    #: a replay: wall-clock epoch seconds at which the recording started (0 when live)
    recorded_at: float = 0.0
    #: a replay: where its time is going and how fast (recording seconds per second);
    #: None when live
    play: PlayState | None = None
    play_speed: float = 1.0

    def __post_init__(self) -> None:
        """The header's text, cleaned once more whatever the source: a message may quote a
        server or an exception raised on its data (the rule of :mod:`gputui.domain.sanitize`)."""
        for name in ("context", "server", "message", "retrying"):
            object.__setattr__(self, name, clean_line(getattr(self, name)))


SnapshotCallback = Callable[[Any], None]  # receives a gputui.domain ClusterSnapshot
StatusCallback = Callable[[SourceStatus], None]


class ClusterSource(Protocol):
    """A stream of cluster snapshots plus the few reads the UI does on demand."""

    def start(self, on_snapshot: SnapshotCallback, on_status: StatusCallback) -> None:
        """Begin delivering snapshots (coalesced: only the newest matters) and status."""

    def stop(self) -> None:
        """Stop all background work; must return promptly."""

    def pod_log(self, namespace: str, pod: str, container: str | None = None,
                tail_lines: int = 200) -> list[str]:
        """Recent log lines of one container (blocking; call from a worker thread)."""

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        """Events whose involvedObject is the pod, oldest first (blocking)."""
