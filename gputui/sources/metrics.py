"""The metrics feed: one background loop that reads what is on screen and posts readings.

Order of sources (ARCHITECTURE.md, data flow 4): Prometheus when configured; the
dcgm-exporter pods through the API server's pod proxy when it is not, or while it is down
(retried after :data:`PROMETHEUS_RETRY` seconds, then ever less often, up to 5 minutes; each
failing exporter waits its turn too: :mod:`gputui.sources.backoff`); local NVML with
``--local``, or as the last resort when gputui runs on a GPU node. Every reading names its
source, its time and the fallback taken (:class:`~gputui.domain.metrics.MetricsOrigin`).

The UI says what is visible with :meth:`MetricsFeed.want` (never blocks) and receives
:class:`~gputui.domain.metrics.MetricsReading` objects through the callback, from the
feed's thread; a slow or dead source delays the next reading, never a key press.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from gputui.domain.metrics import (
    EMPTY_METRICS,
    MetricsOrigin,
    MetricsReading,
    MetricsWant,
    NodeMetrics,
    average_util,
    fleet_from_nodes,
)
from gputui.sources.backoff import TargetBackoff
from gputui.sources.errors import AnswerError, SourceError
from gputui.sources.nvml import NvmlMetrics
from gputui.sources.prometheus import HOUR, PrometheusMetrics
from gputui.sources.scrape import ExporterMetrics

log = logging.getLogger(__name__)

#: seconds before the first attempt to get back to Prometheus while it is down (then
#: doubled after each failure, up to :data:`~gputui.sources.backoff.MAX_RETRY`)
PROMETHEUS_RETRY = 15.0
PROMETHEUS = "prometheus"
#: sparkline samples asked of Prometheus for the selected node (two per braille cell)
WINDOW_SAMPLES = 120

ReadingCallback = Callable[[MetricsReading], None]


class MetricsFeed:
    """Reads metrics every ``refresh`` seconds for what is on screen.

    Args:
        prometheus: the Prometheus reader, or None when no URL is configured.
        exporters: the pod-proxy scraper, or None (no cluster: ``--local``).
        nvml: the local NVML reader: used alone with ``local``, else as the last resort.
        refresh: seconds between readings (``--refresh``).
        clock: "now" (the emulated clock in demo mode).
        lookback: XID lookback window in seconds.
        local: read only this machine's GPUs through NVML.
    """

    def __init__(self, *, prometheus: PrometheusMetrics | None = None,
                 exporters: ExporterMetrics | None = None, nvml: NvmlMetrics | None = None,
                 refresh: float = 2.0, clock: Callable[[], float] = time.time,
                 lookback: float = HOUR, local: bool = False) -> None:
        self.prometheus = prometheus
        self.exporters = exporters
        self.nvml = nvml
        self.refresh = refresh
        self.clock = clock
        self.lookback = lookback
        self.local = local
        self.last: MetricsReading = EMPTY_METRICS
        self.readings = 0
        self._want = MetricsWant()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._prom_down_since = 0.0
        self._prom_error = ""
        #: Prometheus down: asked again in 15 s, then twice as long each time, up to 5 min
        self._prom_backoff: TargetBackoff[str] = TargetBackoff(first=PROMETHEUS_RETRY)
        #: also given each reading and the time it was read at (``--record``)
        self.tap: Callable[[MetricsReading, float], None] | None = None
        self.read_at = 0.0

    # ------------------------------------------------------------------ lifecycle
    def start(self, on_reading: ReadingCallback) -> None:
        """Begin reading in a background thread; returns at once."""
        def loop() -> None:
            while not self._stop.is_set():
                self._wake.clear()
                reading = self.read_once_safely()
                try:
                    if self.tap is not None:
                        self.tap(reading, self.read_at)
                    on_reading(reading)
                except Exception:  # broad: the caller's bug must not end the reading thread
                    log.exception("on_reading callback failed")
                self._wake.wait(self.refresh)

        self._thread = threading.Thread(target=loop, name="gputui-metrics", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and release NVML; returns within a read's timeout at most."""
        self._stop.set()
        self._wake.set()
        if self.exporters is not None:  # scrapes in flight end, and no new one is sent
            self.exporters.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=3.0)
        if self.nvml is not None:
            self.nvml.close()
        if self.prometheus is not None:
            self.prometheus.close()

    def want(self, want: MetricsWant) -> None:
        """Say what is on screen; a new selected node is read at once (never blocks)."""
        previous, self._want = self._want, want
        if want.selected != previous.selected:
            self._wake.set()

    # ------------------------------------------------------------------ one reading
    def read_once_safely(self) -> MetricsReading:
        """:meth:`read_once`, and a reader's bug kept to this reading: the last data marked
        failed, so the pane says so and the next refresh tries again."""
        try:
            return self.read_once()
        except Exception as error:  # broad: one bad answer or bug must not end the thread
            log.exception("metrics read failed")
            text = str(error).splitlines()[0][:160] if str(error) else ""
            return with_origin_error(self.last, f"gputui error reading metrics: "
                                                f"{type(error).__name__}: {text}".rstrip(": "))

    def read_once(self) -> MetricsReading:
        """One reading of what is wanted now, from the best source that answers."""
        now = self.read_at = self.clock()
        want = self._want
        if self.local and self.nvml is not None:
            reading = self._from_nvml(now, "")
        else:
            reading = self._from_prometheus(now, want) or self._from_exporters(now, want)
        self.last = reading
        self.readings += 1
        return reading

    def _from_prometheus(self, now: float, want: MetricsWant) -> MetricsReading | None:
        prometheus = self.prometheus
        if prometheus is None:
            return None
        if self._prom_down_since and not self._prom_backoff.due(PROMETHEUS):
            return None
        try:
            fleet = prometheus.fleet(now, self.lookback)
            util = prometheus.node_util(want.visible, now)
            node = None
            if want.selected:
                step = max(1.0, self.refresh)
                node = prometheus.node(want.selected, now, step * WINDOW_SAMPLES, step)
        except SourceError as error:
            self._prom_down_since = self._prom_down_since or now
            self._prom_error = (f"Prometheus answer unreadable ({error})"
                                if isinstance(error, AnswerError)
                                else f"Prometheus unreachable ({error})")
            wait = self._prom_backoff.failed(PROMETHEUS, self._prom_error)
            log.info("metrics: %s; reading the exporters, Prometheus again in %.0f s",
                     self._prom_error, wait)
            return None
        self._prom_down_since = 0.0
        self._prom_backoff.answered(PROMETHEUS)
        origin = MetricsOrigin("prometheus", prometheus.options.url, now)
        return MetricsReading(origin, fleet, node, util)

    def _fallback(self) -> tuple[str, float]:
        if self.prometheus is None:
            return "", 0.0
        return self._prom_error, self._prom_down_since

    def _from_exporters(self, now: float, want: MetricsWant) -> MetricsReading:
        exporters = self.exporters
        fallback, since = self._fallback()
        if exporters is None:
            if self.nvml is not None:
                return self._from_nvml(now, fallback, since)
            return MetricsReading(MetricsOrigin("none", fallback=fallback, since=since,
                                                error="no metrics source"))
        targets = {n: want.exporters[n] for n in want.nodes if n in want.exporters}
        errors = exporters.scrape(targets, now)
        nodes = {n: exporters.node(n) for n in targets if n not in errors}
        util = {n: u for n, m in nodes.items() if (u := average_util(m)) is not None}
        # a refused pod proxy is said alone: every node's error would repeat it
        error = exporters.forbidden or _exporter_error(want, targets, errors, nodes)
        # no fleet figures from no answer: "0 busy, 0 XIDs" would read as facts
        scope = screen_scope(len(nodes), len(want.nodes))
        fleet = fleet_from_nodes(scope, nodes, now,
                                 exporters.xids_since(now - HOUR)) if nodes else None
        node = nodes.get(want.selected or "") or (exporters.node(want.selected)
                                                  if want.selected else None)
        if error and self.nvml is not None and want.selected == self.nvml.node:
            # gputui runs on the selected GPU node: its own NVML is the last resort
            local = self._from_nvml(now, f"dcgm-exporter: {error}", now)
            if not local.origin.error:
                return MetricsReading(local.origin, fleet_from_nodes(
                    scope, nodes, now,
                    exporters.xids_since(now - HOUR)), local.node, {**util, **local.node_util})
        updated = now if nodes else self.last.origin.updated_at
        origin = MetricsOrigin("exporter", "API server pod proxy", updated, fallback, since,
                               error)
        return MetricsReading(origin, fleet, node, util, tuple(sorted(errors)))

    def _from_nvml(self, now: float, fallback: str, since: float = 0.0) -> MetricsReading:
        nvml = self.nvml
        assert nvml is not None
        try:
            node: NodeMetrics = nvml.read(now)
        except SourceError as error:
            return MetricsReading(MetricsOrigin("nvml", "local NVML", 0.0, fallback, since,
                                                str(error)))
        util = average_util(node)
        fleet = fleet_from_nodes(f"this machine ({nvml.node})", {nvml.node: node}, now)
        origin = MetricsOrigin("nvml", f"local NVML on {nvml.node}", now, fallback, since)
        return MetricsReading(origin, fleet, node, {nvml.node: util} if util is not None else {})


def screen_scope(answered: int, shown: int) -> str:
    """What the fleet figures cover when the exporters are scraped: ``5 nodes on screen``,
    or ``1 of 5 nodes on screen`` when only one answered (a node without a running
    dcgm-exporter, or one that did not answer): "1 nodes on screen" beside five rows read
    as a miscount, and as figures for all five."""
    noun = "node" if shown == 1 else "nodes"
    if answered >= shown:
        return f"{answered} {noun} on screen"
    return f"{answered} of {shown} {noun} on screen"


def _exporter_error(want: MetricsWant, targets: Mapping[str, object],
                    errors: Mapping[str, str], nodes: Mapping[str, object]) -> str:
    """What the pane says went wrong with a scrape of the nodes on screen ("" if nothing)."""
    error = ""
    if want.selected and want.selected not in want.exporters:
        error = f"no running dcgm-exporter pod on {want.selected}"
    elif want.selected and want.selected in errors:
        error = errors[want.selected]
    if targets and not nodes:  # not one exporter on screen answered
        first = next(iter(errors.values()), "")
        on_screen = screen_scope(len(targets), len(targets))
        error = error or f"dcgm-exporter unreachable on all {on_screen} ({first})"
    return error


def with_origin_error(reading: MetricsReading, error: str) -> MetricsReading:
    """``reading`` marked as failed with ``error`` (kept data, new reason)."""
    return replace(reading, origin=replace(reading.origin, error=error))
