"""DCGM metrics straight from the dcgm-exporter pods, through the API server's pod proxy.

Used when no Prometheus is configured or it is down. Only the nodes on screen (and the
selected one) are scraped, each about 30 KB, in parallel; the history the sparklines need is
kept in memory (:class:`~gputui.sources.history.History`), so it starts when gputui does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

from gputui.domain.inputs import GpuHealth
from gputui.domain.metrics import NODE_METRICS, ROW_REMAP_FAILURE, TEMP, XID, NodeMetrics
from gputui.sources.errors import SourceError
from gputui.sources.exposition import Sample, parse_samples
from gputui.sources.history import History
from gputui.sources.http import KubeHttp

EXPORTER_PORT = 9400
#: metrics kept from a scrape: what the pane draws plus what findings read
KEPT = frozenset(NODE_METRICS) | {ROW_REMAP_FAILURE}
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


def health_of(samples: Sequence[Sample]) -> GpuHealth:
    """GPUs present (any series but the XID one, which outlives a lost GPU) and row remaps."""
    present = {s.labels.get("gpu", "") for s in samples if s.name == TEMP}
    failed = sorted({int(s.labels.get("gpu", "0") or 0) for s in samples
                     if s.name == ROW_REMAP_FAILURE and s.value > 0})
    return GpuHealth(len(present), tuple(failed))


class ExporterMetrics:
    """Scrapes exporters for the nodes asked and remembers what they said."""

    def __init__(self, http: KubeHttp, history: History | None = None, workers: int = 8) -> None:
        self.http = http
        self.history = history or History()
        self.workers = workers
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

        def one(item: tuple[str, tuple[str, str]]) -> None:
            node, (namespace, pod) = item
            try:
                text = scrape_text(self.http, namespace, pod)
                samples = parse_samples(text, KEPT)
            except SourceError as error:
                errors[node] = str(error)
                return
            self.scrapes += 1
            self.bytes += len(text)
            self._note_xids(node, samples, now)
            self.history.add(node, now, (({"__name__": s.name, **s.labels}, s.value)
                                         for s in samples))

        if targets:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(targets)),
                                    thread_name_prefix="gputui-scrape") as pool:
                list(pool.map(one, targets.items()))
        self.history.forget_except(list(targets), MAX_NODES)
        return errors

    def _note_xids(self, node: str, samples: Sequence[Sample], now: float) -> None:
        stamp = now if node in self._read else 0.0
        self._read.add(node)
        for sample in samples:
            if sample.name == XID and sample.value > 0:
                key = (node, int(sample.labels.get("gpu", "0") or 0), int(sample.value))
                self.xid_first_seen.setdefault(key, stamp)

    def xids_since(self, since: float) -> int:
        """GPUs whose XID gputui saw appear after ``since`` (epoch seconds)."""
        return sum(1 for when in list(self.xid_first_seen.values()) if when > since)

    def node(self, node: str) -> NodeMetrics:
        """The node's GPUs from the history kept so far."""
        return self.history.node(node)
