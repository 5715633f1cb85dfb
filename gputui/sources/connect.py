"""From :class:`~gputui.settings.Settings` to a source: the two entry points the app uses.

* :func:`open_source` — the live list+watch source for the TUI (demo mode included).
* :func:`read_snapshot` — one snapshot, no watches, for ``gputui check``.

Both load the kubeconfig synchronously, so a missing file or an unknown context fails
before any UI starts, as one :class:`~gputui.sources.errors.SourceError` line.
"""

from __future__ import annotations

import time
from typing import Any

from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sources.demo import DemoCluster, settle_span, settle_speed
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects


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
        return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                          clock=demo.now, on_stop=demo.stop, **options)
    target = load_target(settings.kubeconfig, settings.context)
    return KubeSource(target, settings.thresholds, namespace=settings.namespace, **options)


def read_snapshot(settings: Settings) -> ClusterSnapshot:
    """Connect once, list everything, build one snapshot (``gputui check``).

    In demo mode the emulated clock runs fast until the scenario has planted its faults
    (:func:`~gputui.sources.demo.settle_span`, a few seconds of real time).

    Raises:
        SourceError: the cluster could not be read (one line; ``check`` exits 2).
    """
    from gputui.domain.snapshot import SnapshotBuilder

    if settings.demo:
        span = settle_span(settings.scenario)
        demo = DemoCluster(settings.scenario, speed=settle_speed(span, settings.speed))
        target = demo.start()
        try:
            demo.settle(span)
            objects = read_objects(target, settings.namespace)
            now = demo.now()
        finally:
            demo.stop()
    else:
        target = load_target(settings.kubeconfig, settings.context)
        objects = read_objects(target, settings.namespace)
        now = time.time()
    snapshot: ClusterSnapshot = SnapshotBuilder(settings.thresholds).build(objects, now)
    return snapshot
