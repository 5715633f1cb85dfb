"""DCGM metrics straight from the dcgm-exporter pods, through the API server's pod proxy.

Used when no Prometheus is configured or it is down. Only the nodes on screen (and the
selected one) are scraped, each about 30 KB, in parallel; the history the sparklines need is
kept in memory (:class:`~gputui.sources.history.History`), so it starts when gputui does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import quote

from gputui.domain.health_fields import (
    CLOCK_EVENT_CAUSES,
    CLOCK_EVENTS,
    HEALTH_COUNTERS,
    HEAT_GAUGES,
)
from gputui.domain.inputs import GpuHealth, GpuId
from gputui.domain.metrics import NODE_METRICS, ROW_REMAP_FAILURE, TEMP, XID, NodeMetrics
from gputui.sources.errors import ApiStatusError, SourceError
from gputui.sources.exposition import Sample, parse_samples
from gputui.sources.history import History
from gputui.sources.http import KubeHttp
from gputui.sources.retry import ForbiddenGate

T = TypeVar("T")

EXPORTER_PORT = 9400
#: metrics kept from a scrape: what the pane draws plus what findings read
KEPT = (frozenset(NODE_METRICS) | {ROW_REMAP_FAILURE, CLOCK_EVENTS} | set(HEALTH_COUNTERS)
        | set(HEAT_GAUGES))
#: what the metrics pane's history keeps of a scrape (the health counters go to the XID
#: tracker's counter book instead, as evidence, not as traces)
PANE_KEPT = frozenset(NODE_METRICS) | {ROW_REMAP_FAILURE}
#: what a scrape hands the session's counter book (:mod:`gputui.sources.health_book`)
_READ = frozenset(HEALTH_COUNTERS) | frozenset(HEAT_GAUGES) | {CLOCK_EVENTS}
#: nodes whose history is kept at most (the rows a tall terminal shows, and some scrolling)
MAX_NODES = 200


def proxy_path(namespace: str, pod: str, port: int = EXPORTER_PORT) -> str:
    """The API server path that proxies to ``pod``'s ``/metrics``."""
    return f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}:{port}/proxy/metrics"


#: seconds one exporter scrape may take: a hung exporter must not hold a refresh or the
#: XID read (one attempt, no retries: the next refresh asks again)
SCRAPE_TIMEOUT = 10.0


def scrape_text(http: KubeHttp, namespace: str, pod: str) -> str:
    """One exporter's ``/metrics`` body (raises :class:`SourceError`)."""
    return http.get_text(proxy_path(namespace, pod), timeout=SCRAPE_TIMEOUT, patient=False)


#: what a 403 from the pod proxy is called (the user may not ``get pods/proxy``)
PROXY_FORBIDDEN = "forbidden (pods/proxy)"


def proxy_gate() -> ForbiddenGate:
    """The gate of scrapes through the pod proxy (one per reader of the exporters)."""
    return ForbiddenGate(f"metrics: {PROXY_FORBIDDEN}")


def scrape_all(http: KubeHttp, targets: Sequence[T], pod_of: Callable[[T], tuple[str, str]],
               gate: ForbiddenGate, workers: int) -> list[tuple[T, str | SourceError]]:
    """Each target's ``/metrics`` body, or its error, in parallel; nothing while the pod
    proxy is forbidden, and one scrape alone first while that is not known, so a user
    without ``get pods/proxy`` costs the server one refused request per retry period.
    """
    def one(target: T) -> tuple[T, str | SourceError]:
        if gate.closed():
            return target, SourceError(gate.message())
        try:
            text = scrape_text(http, *pod_of(target))
        except ApiStatusError as error:
            if error.code == 403:
                gate.refused(error)
                return target, SourceError(gate.message())
            gate.answered()
            return target, error
        except SourceError as error:
            return target, error
        gate.answered()
        return target, text

    if not targets:
        return []
    first = [one(targets[0])] if gate.probing() else []
    rest = targets[len(first):]
    if not rest:
        return first
    with ThreadPoolExecutor(max_workers=min(workers, len(rest)),
                            thread_name_prefix="gputui-scrape") as pool:
        return first + list(pool.map(one, rest))


def _gpu(labels: Mapping[str, str]) -> int | None:
    """The ``gpu`` label as an index; None when it is not one (a hostile or odd exporter)."""
    text = labels.get("gpu", "") or "0"
    return int(text) if text.isdigit() and len(text) <= 6 else None


def health_of(samples: Sequence[Sample]) -> GpuHealth:
    """GPUs present (any series but the XID one, which outlives a lost GPU) and row remaps,
    with the scrape's health counters and gauges for the session's counter book."""
    present = {s.labels.get("gpu", "") for s in samples if s.name == TEMP}
    failed = sorted({gpu for s in samples if s.name == ROW_REMAP_FAILURE and s.value > 0
                     if (gpu := _gpu(s.labels)) is not None})
    ids: dict[int, GpuId] = {}
    readings: dict[tuple[int, str], float] = {}
    for sample in samples:
        gpu = _gpu(sample.labels)
        if gpu is None or sample.name not in _READ:
            continue
        if sample.name == TEMP:
            labels = sample.labels
            ids.setdefault(gpu, GpuId(gpu, labels.get("UUID", ""), labels.get("pci_bus_id", ""),
                                      labels.get("modelName", "")))
        name = sample.name
        if name == CLOCK_EVENTS:  # one series per cause: the cause goes with the name
            event = sample.labels.get("clock_event", "")
            if event not in CLOCK_EVENT_CAUSES:
                continue
            name = f"{CLOCK_EVENTS}:{event}"
        # one GPU's series split by a pod change, or repeated per MIG instance: the larger
        # counter is the current one
        key = (gpu, name)
        readings[key] = max(readings.get(key, sample.value), sample.value)
    return GpuHealth(len(present), tuple(failed),
                     present=tuple(ids[g] for g in sorted(ids)),
                     readings=tuple((g, n, v) for (g, n), v in sorted(readings.items())))


class ExporterMetrics:
    """Scrapes exporters for the nodes asked and remembers what they said."""

    def __init__(self, http: KubeHttp, history: History | None = None, workers: int = 8,
                 gate: ForbiddenGate | None = None) -> None:
        self.http = http
        self.history = history or History()
        self.workers = workers
        #: closed for minutes after a 403 from the pod proxy (no ``get pods/proxy``)
        self.gate = gate or proxy_gate()
        self.scrapes = 0
        self.bytes = 0
        #: (node, GPU, XID) -> when gputui first saw it (0: already there at the first read)
        self.xid_first_seen: dict[tuple[str, int, int], float] = {}
        self._read: set[str] = set()

    def close(self) -> None:
        """Abort the scrapes in flight and send no new one (the metrics feed is stopping)."""
        http: KubeHttp | None = self.http  # tests drive the parser without a client
        if http is not None:
            http.close()

    def scrape(self, targets: Mapping[str, tuple[str, str]], now: float) -> dict[str, str]:
        """Scrape each node's exporter (node -> (namespace, pod)); node -> error for failures."""
        errors: dict[str, str] = {}
        answers = scrape_all(self.http, list(targets.items()), lambda item: item[1],
                             self.gate, self.workers)
        for (node, _), answer in answers:
            try:
                if isinstance(answer, SourceError):
                    raise answer
                samples = parse_samples(answer, PANE_KEPT)
            except SourceError as error:
                errors[node] = str(error)
                continue
            self.scrapes += 1
            self.bytes += len(answer)
            self._note_xids(node, samples, now)
            self.history.add(node, now, (({"__name__": s.name, **s.labels}, s.value)
                                         for s in samples))
        self.history.forget_except(list(targets), MAX_NODES)
        return errors

    @property
    def forbidden(self) -> str:
        """The line to show while the pod proxy is forbidden, else ""."""
        return self.gate.message()

    def _note_xids(self, node: str, samples: Sequence[Sample], now: float) -> None:
        stamp = now if node in self._read else 0.0
        self._read.add(node)
        for sample in samples:
            gpu = _gpu(sample.labels)
            if sample.name == XID and sample.value > 0 and gpu is not None:
                self.xid_first_seen.setdefault((node, gpu, int(sample.value)), stamp)

    def xids_since(self, since: float) -> int:
        """GPUs whose XID gputui saw appear after ``since`` (epoch seconds)."""
        return sum(1 for when in list(self.xid_first_seen.values()) if when > since)

    def node(self, node: str) -> NodeMetrics:
        """The node's GPUs from the history kept so far."""
        return self.history.node(node)
