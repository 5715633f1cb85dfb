"""Demo mode: start the emulated GPU cluster and connect to it like any real cluster.

``gputui --demo`` and ``gputui check --demo`` both come through here, so the emulated
cluster is always read over real HTTP with a real kubeconfig: the demo exercises exactly
the code path an operator's cluster does. This is wiring, above both halves: it starts
:mod:`gputui.sim` and hands its kubeconfig to :mod:`gputui.sources`, which never knows that
the emulator exists (the layering test holds it to that).

* :func:`open_demo_source` -> the live source on a started emulated cluster (the TUI);
* :func:`read_demo_snapshot` -> one snapshot once the scenario has settled (``check``).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gputui.domain.health_fields import HealthWindows
from gputui.domain.inputs import ClusterObjects
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sources.connect import lookback_seconds, prometheus_options, read_target
from gputui.sources.errors import SourceError
from gputui.sources.http import KubeHttp
from gputui.sources.kube import KubeSource
from gputui.sources.kubeconfig import KubeTarget, load_target
from gputui.sources.xids import EXPORTER_APP, XidTracker

#: emulated seconds a scenario with a timeline is played past its last event
SETTLE_AFTER_TIMELINE = 45 * 60.0
#: emulated seconds a scenario without a timeline is given to finish bootstrapping
SETTLE_WITHOUT_TIMELINE = 3 * 60.0
#: fastest the emulated clock is run while settling (a loaded machine's controllers slow
#: it further: the clock waits for them)
MAX_SETTLE_SPEED = 600.0


class DemoCluster:
    """An :class:`~gputui.sim.cluster.EmulatedCluster` plus a kubeconfig that points at it.

    Args:
        scenario: scenario name or YAML path (``gputui scenarios``).
        speed: emulated clock speed factor.
        paused: the emulated time stands still from the start until :meth:`settle` moves
            it (``check --demo``: at hundreds of times real time, the second a loaded
            machine takes between the start and the first read would be minutes of the
            scenario gone unread).
    """

    def __init__(self, scenario: str = "healthy", speed: float = 1.0, paused: bool = False):
        self.scenario = scenario
        self.speed = speed
        self.paused = paused
        self.cluster: Any = None
        self._dir: Path | None = None
        self._started = 0.0

    def start(self) -> KubeTarget:
        """Start the emulated cluster and return a loaded connection to it.

        Raises:
            SourceError: an unknown or broken scenario, or a cluster that fails to start.
        """
        from gputui.sim.clock import SimClock
        from gputui.sim.cluster import EmulatedCluster

        clock = SimClock(speed=self.speed)
        if self.paused:
            clock.pause_at(clock.now())
        self.cluster = EmulatedCluster(self.scenario, speed=self.speed, clock=clock)
        try:
            self.cluster.start()
        except Exception as error:  # noqa: BLE001 - one line for the operator
            self.cluster = None
            raise SourceError(f"demo cluster: {error}") from None
        # the scenario's times count from its timeline's start (set while the cluster was
        # held at its first instant), not from when this thread got to read the clock
        operator = self.cluster.operator
        self._started = float(operator.timeline.start if operator is not None
                              else self.cluster.clock.now())
        self._dir = Path(tempfile.mkdtemp(prefix="gputui-demo-"))
        path = self.cluster.write_kubeconfig(self._dir / "kubeconfig")
        return load_target(str(path))

    @property
    def started(self) -> float:
        """Emulated epoch seconds at which the cluster started (0 before)."""
        return self._started

    def now(self) -> float:
        """The emulated clock: the domain's "now" for ages and timeouts in demo mode."""
        return float(self.cluster.clock.now()) if self.cluster is not None else time.time()

    def settle(self, span: float, timeout: float = 120.0,
               tick: Callable[[], None] | None = None, tick_every: float = 0.2,
               stops: Sequence[float] = ()) -> None:
        """Wait until ``span`` emulated seconds have passed since the cluster started.

        The emulated operator may offer its own convergence signal (an async
        ``wait_settled(timeout)``); it is used when present. Start the cluster with a speed
        from :func:`settle_speed` so this takes a few seconds of real time. The emulated
        clock never runs ahead of its controllers (:mod:`gputui.sim.clock`), so on a loaded
        machine this takes longer rather than skipping their work; ``timeout`` is a
        generous ceiling for that. ``tick`` is called about every ``tick_every`` seconds of
        real time meanwhile (``check --demo`` reads the exporters there, as a running gputui
        would), and once with the clock stopped at each of ``stops`` (emulated seconds after
        the start), so each state between two planted events is read at least once however
        loaded the machine is (a GPU seen before the reboot that loses it).
        """
        operator = getattr(self.cluster, "operator", None)
        waiter = getattr(operator, "wait_settled", None)
        if callable(waiter) and tick is None:
            self.cluster.call(waiter(timeout), timeout=timeout + 5.0)
            return
        clock, deadline = self.cluster.clock, time.monotonic() + timeout
        moments = sorted({self._started + s for s in stops if 0 <= s < span} if tick else ())
        for moment in [*moments, self._started + span]:
            # the clock stops there: a late poll here (a loaded machine) must not let the
            # scenario play on past the moment it is read at
            clock.pause_at(moment)
            next_tick = 0.0
            while clock.now() < moment and time.monotonic() < deadline:
                if tick is not None and time.monotonic() >= next_tick:
                    next_tick = time.monotonic() + tick_every
                    tick()
                time.sleep(0.05)
            if moment in moments and tick is not None:
                tick()  # read with the time stopped at the planted event
                clock.pause_at(None)  # on again from where it stopped

    def hold(self) -> None:
        """Run the emulated clock at real speed from now on, so what is read next shows the
        cluster as it settled: at the settling speed (hundreds of times real time) the
        second a full read takes would be minutes of emulated life, and a scenario caught
        in the middle of something (a node still joining) would have moved on."""
        if self.cluster is not None:
            self.cluster.clock.set_speed(1.0)
            self.cluster.clock.pause_at(None)

    def stop(self) -> None:
        """Stop the emulated cluster and remove its kubeconfig; safe to call twice."""
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def settle_span(scenario: str) -> float:
    """Emulated seconds after start by which ``scenario`` has shown what it plants.

    A scenario may declare it (``settle_seconds``); otherwise its last timeline event plus
    :data:`SETTLE_AFTER_TIMELINE` (long enough for every time-based finding: the longest
    default threshold is 30 minutes, ``upgrade-stalled``, and a crash loop passes the
    upgrade controller's 10-restart limit in about 35), or :data:`SETTLE_WITHOUT_TIMELINE`.

    Raises:
        SourceError: unknown or broken scenario.
    """
    from gputui.sim.scenario import ScenarioError, load_scenario

    try:
        loaded = load_scenario(scenario)
    except (ScenarioError, OSError) as error:
        raise SourceError(f"demo cluster: {error}") from None
    declared = getattr(loaded, "settle_seconds", None)
    if declared:
        return float(declared)
    if not loaded.timeline:
        return SETTLE_WITHOUT_TIMELINE
    return max(float(event.at) for event in loaded.timeline) + SETTLE_AFTER_TIMELINE


def event_times(scenario: str) -> tuple[float, ...]:
    """A second before each of ``scenario``'s planted events (emulated seconds after start):
    where the state the events before it left is read once more (none when unreadable:
    :func:`settle_span` has said why already)."""
    from gputui.sim.scenario import ScenarioError, load_scenario

    try:
        return tuple(float(event.at) - 1.0 for event in load_scenario(scenario).timeline)
    except (ScenarioError, OSError):
        return ()


def settle_speed(span: float, minimum: float = 1.0, wall_seconds: float = 4.0) -> float:
    """A clock speed that plays ``span`` emulated seconds in about ``wall_seconds``."""
    return max(minimum, min(MAX_SETTLE_SPEED, span / wall_seconds))


def open_demo_source(settings: Settings, **options: Any) -> KubeSource:
    """The live source on a freshly started emulated cluster (``settings.scenario`` at
    ``settings.speed``); ``source.stop()`` stops the cluster too. ``options`` go to
    :class:`~gputui.sources.kube.KubeSource` as with
    :func:`~gputui.sources.connect.open_source`.

    Raises:
        SourceError: an unknown or broken scenario, or a cluster that fails to start.
    """
    demo = DemoCluster(settings.scenario, speed=settings.speed)
    target = demo.start()
    # The emulated exporters move with the sped-up clock, so XIDs are read at the metrics
    # refresh rate; a real dcgm-exporter collects every 30 s, which the default follows.
    options.setdefault("xid_every", settings.refresh)
    return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                      clock=demo.now, on_stop=demo.stop,
                      prometheus=prometheus_options(settings), **options)


def read_demo_snapshot(settings: Settings, notes: list[str] | None = None) -> ClusterSnapshot:
    """One snapshot of the scenario once it has planted its faults (``check --demo``).

    The emulated clock runs fast until :func:`settle_span` has passed (a few seconds of
    real time), and the exporters are watched while it does, the way a running gputui
    would: XIDs that appear meanwhile get the time they were first seen. ``notes`` as for
    :func:`~gputui.sources.connect.read_snapshot`.

    Raises:
        SourceError: the scenario or the cluster could not be read (``check`` exits 2).
    """
    span = settle_span(settings.scenario)
    demo = DemoCluster(settings.scenario, speed=settle_speed(span, settings.speed), paused=True)
    target = demo.start()
    try:
        tracker = _watch_while_settling(demo, target, settings, span)
        return read_target(target, settings, demo.now, notes, tracker)
    finally:
        demo.stop()


def _watch_while_settling(demo: DemoCluster, target: KubeTarget, settings: Settings,
                          span: float) -> XidTracker:
    """Settle the demo while reading its exporters, so XIDs get a first-seen time."""
    http = KubeHttp(target.configuration)
    # gputui started this cluster: an XID seen at the first read is no older than it
    tracker = XidTracker(http, prometheus_options(settings), lookback_seconds(settings),
                         born=demo.started, windows=HealthWindows.of(settings.thresholds))

    def read() -> None:
        try:
            objects = _exporter_objects(http)
        except SourceError:
            return
        tracker.refresh(objects, demo.now())

    try:
        demo.settle(span, tick=read, tick_every=0.5, stops=event_times(settings.scenario))
        demo.hold()
    finally:
        http.close()
    return tracker


def _exporter_objects(http: KubeHttp) -> ClusterObjects:
    """Just the running dcgm-exporter pods and their nodes: what an XID read needs.

    One label-selected list instead of a full read, so watching the exporters while the
    demo settles at 600x does not slow the emulated controllers it waits for.
    """
    found = http.get("/api/v1/pods", {"labelSelector": f"app={EXPORTER_APP}"})
    pods = {}
    for pod in found.get("items") or []:
        meta = pod.get("metadata") or {}
        pods[(str(meta.get("namespace", "")), str(meta.get("name", "")))] = pod
    nodes: dict[str, dict[str, Any]] = {
        str((pod.get("spec") or {}).get("nodeName")): {} for pod in pods.values()}
    return ClusterObjects(nodes=nodes, pods=pods)
