"""XIDs out of one exporter answer: the gauge's last XID, the opt-in counter, the pods.

dcgm-exporter says three things about a GPU's XIDs: ``DCGM_FI_DEV_XID_ERRORS`` (a gauge of the
*last* XID, labelled ``err_code``/``err_msg``), ``DCGM_EXP_XID_ERRORS_COUNT`` where enabled
(labels ``xid`` and ``window_size_in_ms``: how many of that XID the GPU raised within the
window, so a 95 the gauge showed for less than a scrape still counts), and, with pod mapping
on, the ``pod``/``namespace`` labels on every series of a GPU (``pod_name``/``pod_namespace``
with ``--use-old-namespace``). This module merges them into one
:class:`~gputui.domain.inputs.XidEvent` per (GPU, XID).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from gputui.domain.inputs import XidEvent
from gputui.domain.metrics import XID
from gputui.domain.xid import pods_by_gpu, xid_from_series
from gputui.sources.exposition import Sample

#: dcgm-exporter's opt-in XID counter (``internal/pkg/collector/xid_collector.go``)
COUNT_METRIC = "DCGM_EXP_XID_ERRORS_COUNT"
#: the XID series a reader keeps from an answer
XID_METRICS = frozenset({XID, COUNT_METRIC})


def count_of(labels: Mapping[str, str], value: float) -> tuple[int, int, int, float] | None:
    """``(gpu, xid, count, window seconds)`` of one counter series; None when it says no
    XID (a zero count) or cannot be read (a hostile label or value)."""
    gpu, code = labels.get("gpu") or "0", labels.get("xid") or ""
    window = labels.get("window_size_in_ms") or "0"
    if not (gpu.isdigit() and code.isdigit() and window.isdigit()) or max(
            len(gpu), len(code), len(window)) > 9:
        return None
    if not math.isfinite(value) or value < 1 or int(code) <= 0:
        return None
    return int(gpu), int(code), int(min(value, 1e9)), int(window) / 1000.0


def merge_counts(events: Iterable[XidEvent], counts: Iterable[tuple[int, int, int, float]],
                 counted_at: float, when: float) -> dict[tuple[int, int], XidEvent]:
    """(GPU, XID) -> the gauge's events with the counter's numbers on them; an XID only the
    counter saw is added, timed ``counted_at`` minus the window when that clock is known (it
    happened within the window) and ``when`` otherwise."""
    merged = {(e.gpu, e.xid): e for e in events}
    for gpu, code, count, window in counts:
        known = merged.get((gpu, code))
        at = counted_at - window if counted_at > 0 and window > 0 else when
        if known is not None:  # the counter proves it recent where the gauge cannot
            merged[(gpu, code)] = replace(known, count=max(count, known.count),
                                          count_window=window,
                                          when=known.when if known.when > 0 else at)
            continue
        merged[(gpu, code)] = XidEvent(gpu, code, at, "", count=count, count_window=window)
    return merged


def exporter_events(samples: Sequence[Sample], when: float,
                    counted_at: float = 0.0) -> list[XidEvent]:
    """Every XID one exporter answer shows, one event per (GPU, XID), each stamped ``when``
    (the caller knows what a first sight means), with its count and the GPU's pods."""
    gauge = []
    for sample in samples:
        if sample.name == XID:
            found = xid_from_series(sample.labels, sample.value)
            if found is not None:
                gauge.append(XidEvent(found[0], found[1], when,
                                      sample.labels.get("err_msg", "")))
    counts = [c for s in samples if s.name == COUNT_METRIC
              if (c := count_of(s.labels, s.value)) is not None]
    merged = merge_counts(gauge, counts, counted_at, when)
    pods = pods_by_gpu(s.labels for s in samples)
    return [replace(event, pods=pods.get(event.gpu, ()))
            for _, event in sorted(merged.items())]
