"""Where a TUI session is recorded, and how the recorder is tapped into the live feeds.

``gputui --record FILE`` names the file; ``record: DIR`` in the config records every
session into ``DIR/<context>-<UTC time>.gputui-rec`` (the directory created 0700: a
recording holds node names, workloads and events, like the audit log). The recorder is
given each successful build's input by the source (``on_built``) and each metrics reading
by the feed (``tap``); nothing else changes for them.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from gputui.domain.thresholds import thresholds_to_json
from gputui.settings import Settings
from gputui.sources.tape.format import SUFFIX
from gputui.sources.tape.writer import TapeWriter

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def recording_path(settings: Settings, context: str, wall_now: float | None = None) -> Path | None:
    """The file this session is recorded to, None when it is not recorded."""
    if settings.record_file:
        return Path(settings.record_file).expanduser()
    if not settings.record:
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if wall_now is None
                                                        else wall_now))
    name = _UNSAFE.sub("_", context).strip("._") or "cluster"
    return Path(settings.record).expanduser() / f"{name[:80]}-{stamp}{SUFFIX}"


def open_recorder(settings: Settings, source: Any, metrics: Any) -> TapeWriter | None:
    """A writer for this session, tapped into ``source`` (a KubeSource: ``on_built``) and
    ``metrics`` (a MetricsFeed: ``tap``); None when not recording.

    Raises:
        TapeError: the file cannot be created (one line; the TUI does not start).
    """
    target = source.target
    path = recording_path(settings, target.context)
    if path is None:
        return None
    writer = TapeWriter(path, context=target.context, server=target.server,
                        thresholds=thresholds_to_json(settings.thresholds))
    if hasattr(source, "on_built"):
        source.on_built = writer.objects
    if metrics is not None and hasattr(metrics, "tap"):
        metrics.tap = writer.metrics
    return writer
