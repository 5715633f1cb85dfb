"""XIDs for the ``xid-error`` finding: from Prometheus when configured, else the exporters.

XIDs live only in metrics (``DCGM_FI_DEV_XID_ERRORS``, whose value is the *last* XID seen,
labelled ``err_code``/``err_msg``), not in any Kubernetes object. Prometheus answers for
the whole fleet in one query; without it each node's dcgm-exporter is scraped through the
API server's pod proxy, which is fine for a few hundred nodes and too much for thousands
(about 30 KB per node), so above :data:`MAX_EXPORTER_SCRAPES` gputui says it skipped them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from gputui.domain.health_fields import HealthWindows
from gputui.domain.inputs import WHEN_UNKNOWN, ClusterObjects, GpuHealth, XidEvent
from gputui.domain.pods import as_pod_info
from gputui.domain.xid import xid_from_series
from gputui.sources.errors import SourceError
from gputui.sources.health_book import HealthBook, with_evidence
from gputui.sources.exposition import parse_samples
from gputui.sources.http import KubeHttp
from gputui.sources.prometheus import PrometheusMetrics, PrometheusOptions
from gputui.sources.retry import ForbiddenGate
from gputui.sources.scrape import KEPT, PROXY_FORBIDDEN, health_of, proxy_gate, scrape_all
from gputui.sources.xid_samples import XID_METRICS, exporter_events

METRIC = "DCGM_FI_DEV_XID_ERRORS"
EXPORTER_APP = "nvidia-dcgm-exporter"
EXPORTER_PORT = 9400
#: above this many exporter pods, scraping each one is skipped (use Prometheus)
MAX_EXPORTER_SCRAPES = 256


@dataclass(frozen=True)
class XidReading:
    """What was found and how: ``origin`` is ``prometheus``, ``exporters`` or ``skipped``."""

    xids: Mapping[str, tuple[XidEvent, ...]] = field(default_factory=dict)
    origin: str = "exporters"
    note: str = ""
    #: node -> GPUs reported and failed row remaps (the nodes that were read)
    health: Mapping[str, GpuHealth] = field(default_factory=dict)
    #: every exporter scrape answered 403 (no ``pods/proxy``): XIDs are unknown, not none
    forbidden: bool = False


def parse_exposition(text: str) -> list[dict[str, str]]:
    """Label sets (plus ``value``) of the XID series in a ``/metrics`` body."""
    return [{**sample.labels, "value": repr(sample.value)}
            for sample in parse_samples(text, (METRIC,))]


def _group(pairs: Iterable[tuple[str, XidEvent]]) -> dict[str, tuple[XidEvent, ...]]:
    grouped: dict[str, list[XidEvent]] = {}
    for node, event in pairs:
        grouped.setdefault(node, []).append(event)
    return {node: tuple(sorted(events, key=lambda e: e.gpu)) for node, events in grouped.items()}


def exporter_pods(objects: ClusterObjects) -> list[tuple[str, str, str]]:
    """(namespace, pod, node) of the running dcgm-exporter pods on GPU nodes."""
    pods = []
    for (namespace, name), pod in objects.pods.items():
        info = as_pod_info(pod)
        if (info.labels.get("app") == EXPORTER_APP and info.node in objects.nodes
                and info.phase == "Running"):
            pods.append((namespace, name, info.node))
    return pods


def scrape_exporters(http: KubeHttp, objects: ClusterObjects, now: float,
                     workers: int = 16, gate: ForbiddenGate | None = None,
                     counted_at: float = 0.0) -> XidReading:
    """Scrape each exporter through the pod proxy (unreachable exporters are skipped;
    after a 403, none for minutes: see :func:`~gputui.sources.scrape.scrape_all`).

    Each XID is stamped ``now``; one only the exporter's counter shows is stamped within
    its window of ``counted_at`` (the clock, where ``now`` is a stand-in such as
    :data:`~gputui.domain.inputs.WHEN_UNKNOWN`; defaults to ``now``)."""
    pods = exporter_pods(objects)
    if len(pods) > MAX_EXPORTER_SCRAPES:
        return XidReading(origin="skipped", note=f"{len(pods)} exporters: not scraped, "
                                                 "pass --prometheus-url")
    gate = gate or proxy_gate()

    def read(answer: str | SourceError, node: str
             ) -> tuple[str, list[XidEvent], GpuHealth | None]:
        try:
            if isinstance(answer, SourceError):
                raise answer
            samples = parse_samples(answer, KEPT | XID_METRICS)
        except SourceError:
            return node, [], None
        return node, exporter_events(samples, now, counted_at or now), health_of(samples)

    answers = scrape_all(http, pods, lambda pod: (pod[0], pod[1]), gate, workers)
    results = [read(answer, pod[2]) for pod, answer in answers]
    health = {node: found for node, _, found in results if found is not None}
    return XidReading(_group((node, e) for node, events, _ in results for e in events),
                      "exporters", note=PROXY_FORBIDDEN if gate.message() else "",
                      health=health, forbidden=bool(pods) and bool(gate.message()))


def query_prometheus(url: str | PrometheusOptions, now: float, timeout: float = 10.0,
                     lookback: float = 3600.0) -> XidReading:
    """XIDs with their ages from the series' history, plus GPU health, in two queries.

    Raises:
        SourceError: Prometheus unreachable or answering an error.
    """
    options = url if isinstance(url, PrometheusOptions) else PrometheusOptions(url,
                                                                                timeout=timeout)
    prometheus = PrometheusMetrics(options)
    try:
        xids = prometheus.xids(now, lookback)
        health = prometheus.health(now)
    finally:
        prometheus.close()
    return XidReading(xids, "prometheus", health=health)


def read_xids(http: KubeHttp, objects: ClusterObjects, now: float,
              prometheus: str | PrometheusOptions | None = None,
              lookback: float = 3600.0, gate: ForbiddenGate | None = None,
              counted_at: float = 0.0) -> XidReading:
    """XIDs by node, from Prometheus when configured, else from the exporters
    (``counted_at``: see :func:`scrape_exporters`)."""
    if prometheus:
        return query_prometheus(prometheus, now, lookback=lookback)
    return scrape_exporters(http, objects, now, gate=gate, counted_at=counted_at)


def read_with_fallback(http: KubeHttp, objects: ClusterObjects, now: float,
                       prometheus: str | PrometheusOptions | None,
                       lookback: float = 3600.0, gate: ForbiddenGate | None = None
                       ) -> XidReading:
    """Prometheus when configured; if it fails (down, or answering what gputui cannot
    read), the exporters, saying why."""
    if prometheus:
        try:
            return read_xids(http, objects, now, prometheus, lookback)
        except SourceError as error:
            fallback = scrape_exporters(http, objects, now, gate=gate)
            why = "; ".join(filter(None, (str(error), fallback.note)))
            return replace(fallback, note=f"{why}; read from exporters")
    return scrape_exporters(http, objects, now, gate=gate)


class XidTracker:
    """XIDs and GPU health for the live source, re-read periodically.

    From Prometheus an XID's time comes from the series' history, which holds every XID of
    the lookback. From the exporters the gauge only says "the last XID on this GPU was N",
    so the first read that shows a (node, GPU, XID) is as close as gputui gets to when it
    happened; later reads keep that time, and an XID the gauge no longer shows (a 95 the
    next read shows as 45) is remembered with when it was last seen for the lookback, so
    the worst one is graded, not the last. XIDs already there at the first successful read
    happened at some unknown time before gputui started: they keep
    :data:`~gputui.domain.inputs.WHEN_UNKNOWN` (unless the exporter's counter says they are
    within its window). Read failures keep the previous answer (metrics are an extra, not
    the stream).
    """

    def __init__(self, http: KubeHttp, prometheus: str | PrometheusOptions | None = None,
                 lookback: float = 3600.0, born: float = WHEN_UNKNOWN,
                 windows: HealthWindows | None = None):
        """``born``: when the cluster came to exist, if gputui knows (it started the demo
        cluster itself): XIDs already there at the first read happened after it, so they
        are stamped with it instead of an unknown time. ``windows``: the GPU health
        counters' windows (the settings' thresholds)."""
        #: the health counters' evidence over the session (:mod:`gputui.sources.health_book`)
        self.book = HealthBook(windows)
        self.http = http
        self.born = born
        self.prometheus = prometheus
        self.lookback = lookback
        self.current: Mapping[str, tuple[XidEvent, ...]] = {}
        self.health: Mapping[str, GpuHealth] = {}
        self.origin = ""
        #: the last read was refused (403 on every exporter): XIDs are unknown
        self.forbidden = False
        self._seen: dict[tuple[str, int, int], XidEvent] = {}
        self._read_once = False
        self._last_read = WHEN_UNKNOWN
        #: shared by every read: after a 403 from the pod proxy, none for minutes
        self.gate = proxy_gate()

    def refresh(self, objects: ClusterObjects, now: float) -> bool:
        """Read again; True when the XIDs or the GPU health changed."""
        try:
            reading = read_with_fallback(self.http, objects, now, self.prometheus,
                                         self.lookback, self.gate)
        except SourceError:
            return False
        reading = replace(reading, health=with_evidence(
            reading.origin, reading.health, now, self.book, self.prometheus))
        stamp = now if self._read_once else self.born
        self._read_once = True
        forbidden_changed = reading.forbidden != self.forbidden
        self.forbidden = reading.forbidden
        self.origin = reading.origin
        timed = reading.origin == "prometheus"
        seen: dict[tuple[str, int, int], XidEvent] = {}
        for node, events in reading.xids.items():
            for event in events:
                key = (node, event.gpu, event.xid)
                seen[key] = self._stamped(key, event, stamp, now, timed)
        if not timed:
            seen.update(self._remembered(seen, set(reading.health), objects, now))
        changed = (seen != self._seen or dict(reading.health) != dict(self.health)
                   or forbidden_changed)
        self._seen, self._last_read = seen, now
        self.health = dict(reading.health)
        if changed:
            self.current = _group((key[0], event) for key, event in sorted(
                seen.items(), key=lambda item: (item[0][:2], item[1].when, item[0][2])))
        return changed

    def _remembered(self, seen: Mapping[tuple[str, int, int], XidEvent], read: set[str],
                    objects: ClusterObjects, now: float) -> dict[tuple[str, int, int], XidEvent]:
        """XIDs seen before that this read's gauges no longer show, with when they were
        last seen, for the lookback (a node not read this time keeps what it had; a node
        gone from the cluster is forgotten)."""
        kept = {}
        for key, known in self._seen.items():
            if key in seen:
                continue
            if key[0] not in read:
                if key[0] in objects.nodes:
                    kept[key] = known
                continue
            last = known.last_seen or self._last_read
            if now - last <= self.lookback:
                kept[key] = replace(known, last_seen=last)
        return kept

    def _stamped(self, key: tuple[str, int, int], event: XidEvent, stamp: float, now: float,
                 timed: bool) -> XidEvent:
        """The event with the time it is shown with; stable between reads."""
        known = self._seen.get(key)
        if timed:
            # "before <window start>" keeps its first bound instead of moving every read
            return known if known is not None and known.before and event.before else event
        if known is not None:  # seen before: its first time stays, the rest is this read's
            return replace(event, when=known.when, before=known.before)
        when = stamp
        if event.count > 0 and event.count_window > 0:  # the counter: within its window
            when = max(stamp, now - event.count_window)
        return replace(event, when=when)
