"""From :class:`~gputui.settings.Settings` to a source: the two entry points the app uses.

* :func:`open_source` — the live list+watch source for the TUI.
* :func:`read_snapshot` — one snapshot, no watches, for ``gputui check``.

Both load the kubeconfig synchronously, so a missing file or an unknown context fails
before any UI starts, as one :class:`~gputui.sources.errors.SourceError` line. Demo mode
is wired above this package (:mod:`gputui.demo` starts the emulated cluster and hands its
kubeconfig here): sources never know that the emulator exists.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gputui import gctuning
from gputui.domain.health_fields import HealthWindows
from gputui.domain.inputs import WHEN_UNKNOWN, ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sources.errors import SourceError
from gputui.sources.http import KubeHttp
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import KubeTarget, load_target
from gputui.sources.metrics import MetricsFeed
from gputui.sources.oneshot import read_objects
from gputui.sources.prometheus import PrometheusOptions
from gputui.sources.secrets import remember
from gputui.sources.health_book import HealthBook, with_evidence
from gputui.sources.xids import XidReading, XidTracker, read_xids


def prometheus_options(settings: Settings) -> PrometheusOptions | None:
    """How to reach Prometheus from ``settings``; None when no URL is set."""
    if not settings.prometheus_url:
        return None
    # kept out of every error line and log, as the kubeconfig's credentials are
    remember(settings.prometheus_token, settings.prometheus_password,
             *dict(settings.prometheus_headers).values())
    return PrometheusOptions(
        settings.prometheus_url, token=settings.prometheus_token or "",
        username=settings.prometheus_username or "",
        password=settings.prometheus_password or "",
        headers=dict(settings.prometheus_headers), ca_cert=settings.prometheus_ca_cert or "",
        client_cert=settings.prometheus_client_cert or "",
        client_key=settings.prometheus_client_key or "",
        insecure=settings.prometheus_insecure)


def lookback_seconds(settings: Settings) -> float:
    """The XID lookback window in seconds."""
    return 60.0 * settings.thresholds.xid_lookback_minutes


def open_source(settings: Settings, **options: Any) -> KubeSource:
    """The live source for ``settings``; call ``start(on_snapshot, on_status)`` on it.

    ``options`` go to :class:`KubeSource` (``coalesce``, ``rebuild_every`` ...).

    Raises:
        SourceError: unreadable kubeconfig, unknown context, or demo settings (the emulated
            cluster is started by :func:`gputui.demo.open_demo_source`, not here: failing
            closed, a demo never reads the kubeconfig of a real cluster). An unreachable
            server is not raised: the source reports it and keeps retrying.
    """
    _refuse_demo(settings)
    target = load_target(settings.kubeconfig, settings.context)
    return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                      prometheus=prometheus_options(settings), **options)


def read_snapshot(settings: Settings, notes: list[str] | None = None) -> ClusterSnapshot:
    """Connect once, list everything, read metrics, build one snapshot (``gputui check``).

    Args:
        settings: connection, namespace, Prometheus and thresholds.
        notes: when given, receives one-line remarks for the report's header (which metrics
            source was read, or why none was).

    Raises:
        SourceError: the cluster could not be read (one line; ``check`` exits 2), or demo
            settings (:func:`gputui.demo.read_demo_snapshot` reads the emulated cluster).
    """
    _refuse_demo(settings)
    return read_target(load_target(settings.kubeconfig, settings.context), settings,
                       time.time, notes)


def _refuse_demo(settings: Settings) -> None:
    if settings.demo:
        raise SourceError("demo mode: the emulated cluster is opened by gputui.demo, "
                          "not by a kubeconfig")


def read_target(target: KubeTarget, settings: Settings, clock: Callable[[], float],
                notes: list[str] | None, tracker: XidTracker | None = None) -> ClusterSnapshot:
    """One snapshot of the cluster ``target`` points at, its time from ``clock``;
    ``tracker``: an XID tracker already watching the exporters (a settling demo), whose
    first-seen times are kept."""
    from gputui.domain.snapshot import SnapshotBuilder

    http = KubeHttp(target.configuration)
    try:
        objects = read_objects(target, settings.namespace, http=http)
        now = clock()
        if tracker is not None:
            tracker.http = http
            tracker.refresh(objects, now)
            reading = XidReading(tracker.current, tracker.origin or "exporters",
                                 health=tracker.health, forbidden=tracker.forbidden)
        else:
            reading = _xids(http, objects, settings)
    finally:
        http.close()
    if notes is not None:
        notes.append(f"metrics: {_origin_words(reading, settings)}"
                     + (f" ({reading.note})" if reading.note else ""))
    objects = replace(objects, xids=reading.xids, gpu_health=reading.health)
    if reading.forbidden:  # every scrape refused (no pods/proxy): XIDs unknown, not none
        objects = replace(objects, unreadable={**objects.unreadable, "metrics": "forbidden"})
    gctuning.freeze()  # the objects live until exit: later collections need not walk them
    with gctuning.paused():  # a build's ~10^6 acyclic objects: collections are wasted work
        snapshot: ClusterSnapshot = SnapshotBuilder(settings.thresholds).build(objects, now)
    return snapshot


def _origin_words(reading: XidReading, settings: Settings) -> str:
    if reading.origin == "prometheus":
        return f"Prometheus {settings.prometheus_url}"
    if reading.origin == "exporters":
        return f"dcgm-exporter scrape of {len(reading.health)} node(s) via the pod proxy"
    return "none"


def _xids(http: KubeHttp, objects: ClusterObjects, settings: Settings) -> XidReading:
    """Prometheus when configured (XID ages from its history); if it fails, the exporters.

    From the exporters a single read cannot tell when an XID happened (the gauge only holds
    the last code), so every XID is stamped :data:`~gputui.domain.inputs.WHEN_UNKNOWN`, not
    "now": the report would otherwise say "0 s ago" of an XID that may be days old. Where
    the exporter counts XIDs (``DCGM_EXP_XID_ERRORS_COUNT``), a counted one is known to be
    within the counter's window of the read.
    """
    options = prometheus_options(settings)
    reading = None
    if options is not None:
        try:
            reading = read_xids(http, objects, time.time(), options, lookback_seconds(settings))
        except SourceError as error:
            fallback = read_xids(http, objects, WHEN_UNKNOWN, counted_at=time.time())
            reading = replace(fallback, note=f"{error}; read from exporters")
    if reading is None:
        reading = read_xids(http, objects, WHEN_UNKNOWN, counted_at=time.time())
    # one read: Prometheus' history gives the counters' rises; one scrape gives none
    book = HealthBook(HealthWindows.of(settings.thresholds))
    return replace(reading, health=with_evidence(reading.origin, reading.health, time.time(),
                                                 book, options))


def open_metrics(settings: Settings, source: KubeSource | None) -> MetricsFeed:
    """The metrics feed for the TUI: Prometheus, the exporters through ``source``'s API
    server, and local NVML (``--local``, or as a last resort on a GPU node).

    Nothing connects here: the feed's thread reads from its first refresh on.
    """
    from gputui.sources.metrics import MetricsFeed
    from gputui.sources.nvml import NvmlMetrics, on_gpu_node
    from gputui.sources.prometheus import PrometheusMetrics
    from gputui.sources.scrape import ExporterMetrics

    options = prometheus_options(settings)
    prometheus = PrometheusMetrics(options) if options is not None and not settings.local \
        else None
    exporters = None
    if source is not None and not settings.local:
        exporters = ExporterMetrics(KubeHttp(source.target.configuration))
    nvml = NvmlMetrics() if settings.local or on_gpu_node() else None
    clock = source.clock if source is not None else time.time
    return MetricsFeed(prometheus=prometheus, exporters=exporters, nvml=nvml,
                       refresh=settings.refresh, clock=clock,
                       lookback=lookback_seconds(settings), local=settings.local)
