"""Every XID of the lookback from Prometheus, in two queries whatever the size of the fleet.

``DCGM_FI_DEV_XID_ERRORS`` is a gauge of a GPU's *last* XID, and each code is its own series
(``err_code`` is a label): when a GPU reports 95 and then 45, the 95 series ends and a 45 one
begins. Reading the current value sees only 45; reading the lookback sees both. So:

1. over the fleet, ``last_over_time`` of every ``err_code!="0"`` series within the lookback
   (Prometheus' label index picks only series that ever carried an XID, so this is cheap at
   any size) and ``max_over_time`` of ``DCGM_EXP_XID_ERRORS_COUNT`` where it is exported;
2. on the nodes that had one only, when each series was first and last seen
   (``min``/``max_over_time(timestamp(last_over_time(X[step]))[lookback:step])``: a series
   that lived less than a step is still seen, at the step after it) and the pods on their
   GPUs (dcgm-exporter's ``pod``/``namespace`` labels, or ``pod_name``/``pod_namespace``, on
   any of the GPU's series now).

A series already there at the lookback's start happened "before" it
(:attr:`~gputui.domain.inputs.XidEvent.before`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from gputui.domain.inputs import XidEvent
from gputui.domain.metrics import XID, host_of
from gputui.domain.xid import pod_of, xid_from_series
from gputui.sources.promread import Row
from gputui.sources.xid_samples import COUNT_METRIC, count_of

#: seconds between the points of the first/last-seen subqueries (the times' precision)
STEP = 60
#: (promql, at) -> rows: one instant query
Query = Callable[[str, float], list[Row]]
#: (node, GPU, XID)
Key = tuple[str, int, int]
_POD_BY = "gpu, namespace, pod, pod_namespace, pod_name"


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _either(build: Callable[[str], str]) -> str:
    """``build("Hostname") or build("hostname")``: both spellings of the node label."""
    return f"({build('Hostname')}) or ({build('hostname')})"


def _tag(promql: str, tag: str) -> str:
    return f'label_replace({promql}, "q", "{tag}", "", "")'


def fleet_query(window: float) -> str:
    """Query 1: every XID series of the lookback, and the exporter's counts."""
    span = f"{int(window)}s"
    return (_tag(f'last_over_time({XID}{{err_code!="0"}}[{span}])', "xid") + " or "
            + _tag(f"max_over_time({COUNT_METRIC}[{span}]) > 0", "count"))


def detail_query(hosts: Iterable[str], window: float, any_of: Callable[[Iterable[str]], str]
                 ) -> str:
    """Query 2, on ``hosts`` only: first and last sight of each XID and counter series, and
    the pods on those nodes' GPUs now."""
    names, span = any_of(hosts), f"[{int(window)}s:{STEP}s]"

    def seen(how: str, h: str) -> str:
        xid = f'{XID}{{err_code!="0", {h}=~"{names}"}}'
        count = f'{COUNT_METRIC}{{{h}=~"{names}"}}'
        return (_tag(f"{how}_over_time(timestamp(last_over_time({xid}[{STEP}s])){span})",
                     how) + " or " + _tag(
            f"{how}_over_time(timestamp(last_over_time({count}[{STEP}s]) > 0){span})", how))

    def pods(h: str) -> str:
        series = f'{{__name__=~"DCGM_FI_DEV_.+", {h}=~"{names}"'
        return _tag(f'group by ({h}, {_POD_BY}) ({series}, pod!=""}}) or '
                    f'group by ({h}, {_POD_BY}) ({series}, pod_name!=""}})', "pods")

    def first(h: str) -> str:
        return seen("min", h)

    def last(h: str) -> str:
        return seen("max", h)

    return " or ".join((_either(first), _either(last), _either(pods)))


@dataclass
class _Seen:
    """What the two answers say of one (node, GPU, XID)."""

    message: str = ""
    first: float | None = None
    last: float | None = None
    count: int = 0
    window: float = 0.0
    gauge: bool = False
    pods: set[str] = field(default_factory=set)


def _key(labels: Mapping[str, str], value: float | None) -> Key | None:
    """(node, GPU, XID) of an XID series (``err_code``) or a counter series (``xid``)."""
    node = host_of(labels)
    if not node:
        return None
    if "xid" in labels and "err_code" not in labels:
        counted = count_of(labels, 1.0)
        return (node, counted[0], counted[1]) if counted is not None else None
    found = xid_from_series(labels, labels.get("err_code") or value)
    return (node, found[0], found[1]) if found is not None else None


def _read_fleet(rows: Iterable[Row]) -> dict[Key, _Seen]:
    seen: dict[Key, _Seen] = {}
    for labels, value in rows:
        key = _key(labels, value)
        if key is None or value is None:
            continue
        entry = seen.setdefault(key, _Seen())
        if labels.get("q") == "count":
            counted = count_of(labels, value)
            if counted is not None:
                entry.count, entry.window = max(entry.count, counted[2]), counted[3]
            continue
        entry.gauge, entry.message = True, entry.message or labels.get("err_msg", "")
        pod = pod_of(labels)
        if pod:
            entry.pods.add(pod)
    return seen


def _read_detail(rows: Iterable[Row], seen: Mapping[Key, _Seen]) -> dict[tuple[str, int],
                                                                           set[str]]:
    """Fill first/last times into ``seen``; return (node, GPU) -> pods there now."""
    pods: dict[tuple[str, int], set[str]] = {}
    for labels, value in rows:
        tag = labels.get("q")
        if tag == "pods":
            pod, gpu = pod_of(labels), labels.get("gpu") or ""
            if pod and gpu.isdigit() and len(gpu) <= 6:
                pods.setdefault((host_of(labels), int(gpu)), set()).add(pod)
            continue
        key = _key(labels, None)
        entry = seen.get(key) if key is not None else None
        if entry is None or value is None:
            continue
        if tag == "min":
            entry.first = value if entry.first is None else min(entry.first, value)
        elif tag == "max":
            entry.last = value if entry.last is None else max(entry.last, value)
    return pods


def _event(key: Key, entry: _Seen, pods: set[str], now: float, window: float) -> XidEvent:
    first = entry.first if entry.first is not None else now
    before = first <= now - window + STEP
    last = entry.last if entry.last is not None else now
    return XidEvent(key[1], key[2], now - window if before else first, entry.message, before,
                    last_seen=last if last < now - 2 * STEP else 0.0, count=entry.count,
                    count_window=entry.window, pods=tuple(sorted(entry.pods | pods)))


def xid_history(query: Query, now: float, window: float,
                any_of: Callable[[Iterable[str]], str]) -> dict[str, tuple[XidEvent, ...]]:
    """Node -> every XID its GPUs reported within ``window`` seconds of ``now`` (two queries;
    the second only when some node had one). ``any_of`` writes the regex of node names."""
    seen = _read_fleet(query(fleet_query(window), now))
    hosts = sorted({node for node, _, _ in seen})
    if not hosts:
        return {}
    pods = _read_detail(query(detail_query(hosts, window, any_of), now), seen)
    events: dict[str, list[XidEvent]] = {}
    for key in sorted(seen):
        events.setdefault(key[0], []).append(
            _event(key, seen[key], pods.get(key[:2], set()), now, window))
    return {node: tuple(sorted(found, key=lambda e: (e.gpu, e.when)))
            for node, found in events.items()}
