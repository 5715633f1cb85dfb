"""Findings that come from GPU metrics: ``xid-error``, ``gpu-missing``, ``row-remap-failure``.

An XID is judged by its meaning *and* its age. ``DCGM_FI_DEV_XID_ERRORS`` holds the last XID a
GPU raised for as long as the exporter runs, so a week-old XID 48 is still in every scrape;
treating it as current would fail ``gputui check`` forever. An XID that appeared within the
lookback window (a threshold, default 1 h) carries its meaning's severity; one older than
that, or whose time cannot be known, is ``info`` and says what is known.

Each GPU is graded by the *worst* XID it reported within the lookback, not its last one: the
gauge keeps only the last value and a fatal XID (95, 79, 154 ...) is usually followed at once
by 45 ("preemptive cleanup"), which alone would say "check the application". The sources
report every XID they saw (Prometheus from each ``err_code`` series' history, the exporter
scrapes from what gputui remembers), and the finding names the later ones and the pods.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from gputui.domain import catalogue as C
from gputui.domain.inputs import GpuHealth, XidEvent
from gputui.domain.model import Finding, NodeView, Severity
from gputui.domain.timefmt import duration
from gputui.domain.xid import xid_info

GPU_MISSING_HINT = ("A GPU gone from DCGM's view has usually fallen off the bus (XID 79): "
                    "cordon and drain the node, then reboot it; RMA the GPU if it repeats.")
ROW_REMAP_HINT = ("The GPU could not remap a failing memory row: its memory cannot be "
                  "trusted. Drain the node and have the GPU replaced (RMA).")


def clock_phrase(when: float, now: float) -> str:
    """``12:00``, ``12:00 yesterday`` or ``2026-11-21 12:00`` (local time) for ``when``."""
    then, today = time.localtime(when), time.localtime(now)
    stamp = time.strftime("%H:%M", then)
    days = (time.mktime(today[:3] + (0, 0, 0) + today[6:]) -
            time.mktime(then[:3] + (0, 0, 0) + then[6:])) / 86400
    if round(days) == 0:
        return stamp
    if round(days) == 1:
        return f"{stamp} yesterday"
    return time.strftime("%Y-%m-%d %H:%M", then)


def _age_words(event: XidEvent, now: float, lookback: float) -> tuple[str, bool]:
    """(what is known of the XID's time, whether it counts as recent)."""
    if event.when <= 0:
        return "time unknown (already there when gputui first read the GPU)", False
    if event.before:
        return f"before {clock_phrase(event.when, now)}", False
    age = now - event.when
    if age > lookback:
        return f"{duration(age)} ago (at {clock_phrase(event.when, now)})", False
    return f"{duration(age)} ago", True


def _recent(event: XidEvent, now: float, lookback: float) -> bool:
    return _age_words(event, now, lookback)[1]


#: pods named in a finding at most (the rest are counted)
MAX_PODS = 3


def _extras(event: XidEvent, later: Sequence[XidEvent], pods: Sequence[str]) -> str:
    """", then 45", the exporter's count and "; pods: ns/name" (each only when known)."""
    text = ""
    codes = list(dict.fromkeys(e.xid for e in later if e.xid != event.xid))
    if codes:
        text += ", then " + ", ".join(str(code) for code in codes)
    if event.count > 1:
        window = f" within {duration(event.count_window)}" if event.count_window > 0 else ""
        text += f" ({event.count} times{window})"
    if pods:
        shown = ", ".join(pods[:MAX_PODS])
        more = f" and {len(pods) - MAX_PODS} more" if len(pods) > MAX_PODS else ""
        text += f"; pods: {shown}{more}"
    return text


def _later_steps(event: XidEvent, later: Sequence[XidEvent]) -> str:
    """What a later XID on the GPU asks for beyond the worst one's step (154's recovery
    action after a 79, say); "" when nothing more."""
    base = xid_info(event.xid, event.message).action
    steps = []
    for other in later:
        info = xid_info(other.xid, other.message)
        if info.severity >= Severity.WARNING and info.action != base:
            steps.append(f"XID {other.xid} after it: {info.action}")
    return "".join(f" {step[0].upper()}{step[1:]}." for step in dict.fromkeys(steps))


def xid_finding(node: str, event: XidEvent, now: float, lookback_seconds: float,
                later: Sequence[XidEvent] = (), pods: Sequence[str] = ()) -> Finding:
    """The ``xid-error`` finding of one GPU's graded XID, by meaning and age; ``later``: the
    GPU's XIDs after it (named, never graded instead of it); ``pods``: those on the GPU."""
    info = xid_info(event.xid, event.message)
    when, recent = _age_words(event, now, lookback_seconds)
    extras = _extras(event, later, pods)
    if recent:
        message = f"GPU {event.gpu}: XID {event.xid} ({info.meaning}) {when}{extras}"
        hint = info.action[0].upper() + info.action[1:] + "." + _later_steps(event, later)
        return C.finding(C.XID_ERROR, node, message, hint, f"gpu{event.gpu}",
                         severity=info.severity)
    window = duration(lookback_seconds)
    message = f"GPU {event.gpu}: last XID {event.xid} ({info.meaning}), {when}{extras}"
    why = ("Its time is unknown" if event.when <= 0
           else f"It is not within the {window} lookback")
    hint = (f"{why}, so it is not counted as current. If it was not dealt with: "
            f"{info.action}.")
    return C.finding(C.XID_ERROR, node, message, hint, f"gpu{event.gpu}", severity=Severity.INFO)


def latest_per_gpu(events: Sequence[XidEvent]) -> list[XidEvent]:
    """Each GPU's most recent XID (one of unknown time counts as older than a timed one)."""
    latest: dict[int, XidEvent] = {}
    for event in events:
        if event.gpu not in latest or event.when >= latest[event.gpu].when:
            latest[event.gpu] = event
    return [latest[gpu] for gpu in sorted(latest)]


def graded_per_gpu(events: Sequence[XidEvent], now: float,
                   lookback_seconds: float) -> list[XidEvent]:
    """Each GPU's XID to grade: the worst it reported within the lookback (the earliest of
    equals: what came after is its consequence), else its most recent one. A fatal XID is
    usually followed at once by 45; the gauge then shows 45, and grading that would say
    "check the application" of a GPU that needs a reset."""
    graded = {event.gpu: event for event in latest_per_gpu(events)}
    worst: dict[int, tuple[int, float]] = {}
    for event in events:
        if _recent(event, now, lookback_seconds):
            key = (xid_info(event.xid, event.message).severity.rank, -event.when)
            if event.gpu not in worst or key > worst[event.gpu]:
                worst[event.gpu], graded[event.gpu] = key, event
    return [graded[gpu] for gpu in sorted(graded)]


def xid_node_findings(node: str, events: Sequence[XidEvent], now: float,
                      lookback_seconds: float = 3600.0) -> list[Finding]:
    """One ``xid-error`` per GPU that raised one: the worst within the lookback, naming the
    XIDs after it and the pods on the GPU."""
    found = []
    for event in graded_per_gpu(events, now, lookback_seconds):
        same_gpu = [e for e in events if e.gpu == event.gpu]
        # a source's times have a precision (Prometheus' step): an equal time is "then" too
        later = sorted((e for e in same_gpu if e.when >= event.when > 0 and e is not event),
                       key=lambda e: e.when)
        pods = sorted({pod for e in same_gpu for pod in e.pods})
        found.append(xid_finding(node, event, now, lookback_seconds, later, pods))
    return found


def health_findings(view: NodeView, health: GpuHealth,
                    physical: int | None) -> list[Finding]:
    """``gpu-missing`` and ``row-remap-failure`` from what the node's metrics report.

    ``physical`` is the node's physical GPU count (:func:`gputui.domain.mig.physical_gpu_count`)
    and the metrics count physical GPUs too (distinct ``gpu`` indices; a MIG GPU's instances
    share their parent's, and dcgm-exporter reports a MIG-enabled GPU without instances as a
    whole GPU). None (``single`` strategy with a layout the config does not explain) is not
    a fault: nothing is said.
    """
    found = []
    # while the MIG manager re-partitions, a GPU with no instance yet is legitimately unreported
    reconfiguring = view.mig_state in ("pending", "rebooting")
    if physical and health.gpus_reported < physical and not reconfiguring:
        found.append(C.finding(
            C.GPU_MISSING, view.name,
            f"metrics report {health.gpus_reported} of the node's {physical} GPUs",
            GPU_MISSING_HINT))
    for gpu in health.row_remap_failed:
        found.append(C.finding(
            C.ROW_REMAP_FAILURE, view.name,
            f"GPU {gpu}: row remapping failed (DCGM_FI_DEV_ROW_REMAP_FAILURE)",
            ROW_REMAP_HINT, f"gpu{gpu}"))
    return found


def metric_findings(view: NodeView, xids: Sequence[XidEvent], health: GpuHealth | None,
                    now: float, lookback_seconds: float,
                    physical: int | None) -> list[Finding]:
    """Every metrics finding of one node (``physical``: see :func:`health_findings`)."""
    found = xid_node_findings(view.name, xids, now, lookback_seconds)
    if health is not None:
        found.extend(health_findings(view, health, physical))
    return found
