"""From :class:`~gputui.settings.Settings` to a source: the two entry points the app uses.

* :func:`open_source` — the live list+watch source for the TUI (demo mode included).
* :func:`read_snapshot` — one snapshot, no watches, for ``gputui check``.

Both load the kubeconfig synchronously, so a missing file or an unknown context fails
before any UI starts, as one :class:`~gputui.sources.errors.SourceError` line.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gputui.domain.inputs import WHEN_UNKNOWN, ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sources.demo import DemoCluster, settle_span, settle_speed
from gputui.sources.errors import SourceError
from gputui.sources.http import KubeHttp
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import KubeTarget, load_target
from gputui.sources.oneshot import read_objects
from gputui.sources.xids import XidReading, read_xids


def open_source(settings: Settings, **options: Any) -> KubeSource:
    """The live source for ``settings``; call ``start(on_snapshot, on_status)`` on it.

    In demo mode the emulated cluster is started here and stopped by ``source.stop()``.
    ``options`` go to :class:`KubeSource` (``coalesce``, ``rebuild_every`` ...).

    Raises:
        SourceError: unreadable kubeconfig, unknown context, or a demo that cannot start.
            An unreachable server is not raised: the source reports it and keeps retrying.
    """
    if settings.demo:
        demo = DemoCluster(settings.scenario, speed=settings.speed)
        target = demo.start()
        # The emulated exporters move with the sped-up clock, so XIDs are read at the metrics
        # refresh rate; a real dcgm-exporter collects every 30 s, which the default follows.
        options.setdefault("xid_every", settings.refresh)
        return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                          clock=demo.now, on_stop=demo.stop,
                          prometheus_url=settings.prometheus_url, **options)
    target = load_target(settings.kubeconfig, settings.context)
    return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                      prometheus_url=settings.prometheus_url, **options)


def read_snapshot(settings: Settings, notes: list[str] | None = None) -> ClusterSnapshot:
    """Connect once, list everything, read XIDs, build one snapshot (``gputui check``).

    In demo mode the emulated clock runs fast until the scenario has planted its faults
    (:func:`~gputui.sources.demo.settle_span`, a few seconds of real time).

    Args:
        settings: connection, namespace, Prometheus URL and thresholds.
        notes: when given, receives one-line remarks for the report's header (how XIDs
            were read, or why they were not).

    Raises:
        SourceError: the cluster could not be read (one line; ``check`` exits 2).
    """
    if settings.demo:
        span = settle_span(settings.scenario)
        demo = DemoCluster(settings.scenario, speed=settle_speed(span, settings.speed))
        target = demo.start()
        try:
            demo.settle(span)
            return _read_once(target, settings, demo.now, notes)
        finally:
            demo.stop()
    return _read_once(load_target(settings.kubeconfig, settings.context), settings, time.time,
                      notes)


def _read_once(target: KubeTarget, settings: Settings, clock: Callable[[], float],
               notes: list[str] | None) -> ClusterSnapshot:
    from gputui.domain.snapshot import SnapshotBuilder

    http = KubeHttp(target.configuration)
    try:
        objects = read_objects(target, settings.namespace, http=http)
        now = clock()
        reading = _xids(http, objects, settings.prometheus_url)
    finally:
        http.close()
    if notes is not None:
        notes.append(f"xids: {reading.origin}" + (f" ({reading.note})" if reading.note else ""))
    objects = replace(objects, xids=reading.xids)
    gc.freeze()  # the objects live until exit: later collections need not walk them
    snapshot: ClusterSnapshot = SnapshotBuilder(settings.thresholds).build(objects, now)
    return snapshot


def _xids(http: KubeHttp, objects: ClusterObjects, prometheus_url: str | None) -> XidReading:
    """Prometheus when configured; if it fails, the exporters, saying why.

    A single read cannot tell when an XID happened (the gauge only holds the last code),
    so every XID is stamped :data:`~gputui.domain.inputs.WHEN_UNKNOWN`, not "now": the
    report would otherwise say "0 s ago" of an XID that may be days old.
    """
    if prometheus_url:
        try:
            return read_xids(http, objects, WHEN_UNKNOWN, prometheus_url)
        except SourceError as error:
            fallback = read_xids(http, objects, WHEN_UNKNOWN)
            return replace(fallback, note=f"{error}; read from exporters")
    return read_xids(http, objects, WHEN_UNKNOWN)
