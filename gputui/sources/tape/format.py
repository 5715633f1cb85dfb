"""The recording ("tape") file format: what ``gputui --record`` writes and ``replay`` reads.

What is recorded is the domain's *input* (:class:`~gputui.domain.inputs.ClusterObjects` and
the source's ``now``), not snapshots: a replay rebuilds each snapshot with the same
``SnapshotBuilder``, so the findings at a time are exactly what the live app computed then,
and a later gputui with better findings can re-judge an old incident.

The file is one gzip stream (``zcat`` reads it) of newline-separated JSON frames:

* the header, first: ``{"gputui_tape": FORMAT, "context", "server", "recorded_at",
  "version"}``;
* objects frames, one per successful build, ``{"t", "k": "K"|"D", "end", "ops", "whole"}``:
  ``K`` (a keyframe) starts from nothing, ``D`` (a delta) from the frame before. ``ops`` are
  ``[collection, op, key, value]`` with op ``s`` (set the whole object), ``p`` (an RFC 7386
  JSON merge patch of the previous version, :mod:`gputui.domain.merge_patch`: a node's
  heartbeat is its conditions, not its 80 labels) or ``d`` (removed). One build may span
  several lines (parts, ``end`` 0 until the last): each line is encoded and parsed in one
  C call that holds the GIL, so a line of a few hundred objects keeps the TUI's thread
  responsive while a 5,000-node keyframe is written or read. A reader applies a frame only
  once its ``end`` line arrived: a cut file never yields half a build. ``whole`` holds the
  small cluster-wide fields that changed, in
  :func:`~gputui.sources.tape.objects.objects_to_json`'s form;
* metrics frames ``{"t", "k": "M", ...}`` (:mod:`gputui.sources.tape.metrics`);
* timeline frames ``{"t", "k": "E", "events": [...]}`` (dicts the timeline owns);
* cluster frames ``{"t", "k": "C", "cluster": {"server", "uid"}}``: which cluster this is
  (the server URL without userinfo and the ``kube-system`` namespace UID,
  :mod:`gputui.domain.cluster_id`), written before the first objects frame that carries it
  and again if it changes. Not in the header: the header is written when the file is
  opened, before the server has been asked. A reader that does not know the kind skips it.

Everything read back is hostile (a recording may be mailed around): shapes are checked and
every string goes through the sanitiser before the domain sees it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from gputui.domain.cluster_id import cluster_id, parse_cluster
from gputui.sources.errors import SourceError

#: the format this gputui writes; a reader refuses a newer one by name
FORMAT = 1
#: the header's key that says "this is a gputui recording"
MAGIC = "gputui_tape"
#: what ``--record DIR`` names its files (``<context>-<UTC time>.gputui-rec``)
SUFFIX = ".gputui-rec"
#: keyed collections of ClusterObjects and whether their key is (namespace, name)
COLLECTIONS: Mapping[str, bool] = {"nodes": False, "pods": True, "daemonsets": False,
                                   "configmaps": True, "label_times": False}
#: the small cluster-wide fields, recorded whole when they change
SMALL_FIELDS = ("cluster_policies", "nvidia_drivers", "events", "operator_namespace",
                "context", "server", "forbidden", "unreadable", "xids", "loading",
                "gpu_health", "disruption_budgets")
#: frame kinds
KEYFRAME, DELTA, METRICS, TIMELINE, CLUSTER = "K", "D", "M", "E", "C"
SET, PATCH, DELETE = "s", "p", "d"


class TapeError(SourceError):
    """A recording cannot be written or read; ``str()`` is one line for the operator."""


def encode_line(frame: Mapping[str, Any]) -> bytes:
    """One frame as a line: compact JSON, non-ASCII kept as UTF-8, a NaN as null (callers
    say what a null means). msgspec, not json: a 5,000-node keyframe encodes four times
    faster on the writer's thread, which shares the interpreter with the TUI."""
    return msgspec.json.encode(frame) + b"\n"


def header(context: str, server: str, recorded_at: float, version: str,
           thresholds: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The first frame; ``thresholds``: the finding thresholds the session ran with (a
    replay judges the recorded moments by them, not by its own)."""
    head: dict[str, Any] = {MAGIC: FORMAT, "context": context, "server": server,
                            "recorded_at": recorded_at, "version": version}
    if thresholds:
        head["thresholds"] = dict(thresholds)
    return head


def cluster_frame(at: float, server: str, uid: str) -> dict[str, Any]:
    """The frame naming the recorded cluster (``uid`` "": it could not be read)."""
    return {"t": at, "k": CLUSTER, "cluster": cluster_id(server, uid).to_json()}


def cluster_uid_of(frame: Mapping[str, Any]) -> str:
    """The UID a cluster frame names ("" when none usable: a hostile file)."""
    found = parse_cluster(frame.get("cluster"))
    return found.uid if found is not None else ""


#: 19 digits or more: an integer a 64-bit field cannot hold may be in the line
_LONG_NUMBER = re.compile(rb"[0-9]{19,}")
#: the largest integer a recording written by gputui holds (a 64-bit field)
_INT_LIMIT = 1 << 63


def holds_huge_int(value: Any) -> bool:
    """Whether an integer beyond 64 bits is anywhere in ``value`` (a crafted ``10**400`` as
    a time, a threshold or a GPU index overflows every ``float()`` that reads it later).
    Walked only when the line's bytes hold a long run of digits (:func:`may_hold_huge_int`)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not -_INT_LIMIT <= item < _INT_LIMIT:
            return True
    return False


def may_hold_huge_int(line: bytes) -> bool:
    """Whether a frame's bytes hold 19 digits in a row (scanned in C): only then can a
    number in it be too big for 64 bits, and :func:`holds_huge_int` is worth its walk."""
    return _LONG_NUMBER.search(line) is not None


#: bytes read from the file at a time
READ_CHUNK = 1 << 20
#: the longest line a recording may inflate to. The writer cuts a build into parts of
#: ``PART_OPS`` objects (a 5,000-node keyframe part is about 1 MB), so a line of more is
#: not a frame gputui wrote: it is refused before it can fill the memory
MAX_LINE = 32 << 20
#: the whole file inflates to at most this many times its compressed size (recordings
#: measure about 11x; deflate reaches 1,000x on a crafted file), or :data:`MIN_INFLATED`
MAX_RATIO = 64
MIN_INFLATED = 64 << 20


def tape_lines(read: Callable[[int], bytes], path: Path, size: int = 0) -> Iterator[bytes]:
    """Complete lines of the decompressed stream; the partial last one is dropped.

    A recording is shared after incidents, so it is treated as hostile: inflation stops at
    :data:`MAX_LINE` for a line and at :data:`MAX_RATIO` times ``size`` (the compressed
    file's size) for the whole, with one line saying so, before memory can follow it.
    """
    unzip = zlib.decompressobj(31)
    limit = max(MIN_INFLATED, MAX_RATIO * size)
    budget = limit
    rest = b""
    started = False
    while not unzip.eof:
        chunk = unzip.unconsumed_tail or read(READ_CHUNK)
        try:
            # at the file's end, what the input already read still holds (a bounded
            # decompress may stop with output pending and no input left over)
            data = unzip.decompress(chunk, READ_CHUNK) if chunk else unzip.flush()
        except zlib.error:
            raise TapeError(f"not a gputui recording: {path}" if not started else
                            f"recording {path} is damaged (its compressed data is corrupt)"
                            ) from None
        if not chunk and not data:
            break
        started = True
        budget -= len(data)
        pieces = (rest + data).split(b"\n")
        rest = pieces.pop()
        if budget < 0:
            raise TapeError(f"recording {path} is damaged or too big (it inflates past "
                            f"{_mb(limit)})")
        if len(rest) > MAX_LINE or any(len(piece) > MAX_LINE for piece in pieces):
            raise TapeError(f"recording {path} is damaged or too big (a line inflates past "
                            f"{_mb(MAX_LINE)})")
        yield from pieces


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB"
