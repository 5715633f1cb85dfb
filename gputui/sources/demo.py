"""Demo mode: start the emulated GPU cluster and connect to it like any real cluster.

``gputui --demo`` and ``gputui check --demo`` both come through here, so the emulated
cluster is always read over real HTTP with a real kubeconfig: the demo exercises exactly
the code path an operator's cluster does.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gputui.sources.errors import SourceError
from gputui.sources.kubeconfig import KubeTarget, load_target

#: emulated seconds a scenario with a timeline is played past its last event
SETTLE_AFTER_TIMELINE = 45 * 60.0
#: emulated seconds a scenario without a timeline is given to finish bootstrapping
SETTLE_WITHOUT_TIMELINE = 3 * 60.0
#: fastest the emulated clock is run while settling (the controllers must keep up)
MAX_SETTLE_SPEED = 600.0


class DemoCluster:
    """An :class:`~gputui.sim.cluster.EmulatedCluster` plus a kubeconfig that points at it.

    Args:
        scenario: scenario name or YAML path (``gputui scenarios``).
        speed: emulated clock speed factor.
    """

    def __init__(self, scenario: str = "healthy", speed: float = 1.0):
        self.scenario = scenario
        self.speed = speed
        self.cluster: Any = None
        self._dir: Path | None = None
        self._started = 0.0

    def start(self) -> KubeTarget:
        """Start the emulated cluster and return a loaded connection to it.

        Raises:
            SourceError: an unknown or broken scenario, or a cluster that fails to start.
        """
        from gputui.sim.cluster import EmulatedCluster

        self.cluster = EmulatedCluster(self.scenario, speed=self.speed)
        try:
            self.cluster.start()
        except Exception as error:  # noqa: BLE001 - one line for the operator
            self.cluster = None
            raise SourceError(f"demo cluster: {error}") from None
        self._started = float(self.cluster.clock.now())
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

    def settle(self, span: float, timeout: float = 60.0,
               tick: Callable[[], None] | None = None, tick_every: float = 0.2) -> None:
        """Wait until ``span`` emulated seconds have passed since the cluster started.

        The emulated operator may offer its own convergence signal (an async
        ``wait_settled(timeout)``); it is used when present. Start the cluster with a speed
        from :func:`settle_speed` so this takes a few seconds of real time: changing the
        clock's speed later would not shorten sleeps the controllers have already begun.
        ``tick`` is called about every ``tick_every`` seconds of real time meanwhile (``check
        --demo`` reads the exporters there, as a running gputui would).
        """
        operator = getattr(self.cluster, "operator", None)
        waiter = getattr(operator, "wait_settled", None)
        if callable(waiter) and tick is None:
            self.cluster.call(waiter(timeout), timeout=timeout + 5.0)
            return
        horizon = self._started + span
        deadline = time.monotonic() + timeout
        next_tick = 0.0
        while self.cluster.clock.now() < horizon and time.monotonic() < deadline:
            if tick is not None and time.monotonic() >= next_tick:
                next_tick = time.monotonic() + tick_every
                tick()
            time.sleep(0.05)

    def hold(self) -> None:
        """Run the emulated clock at real speed from now on, so what is read next shows the
        cluster as it settled: at the settling speed (hundreds of times real time) the
        second a full read takes would be minutes of emulated life, and a scenario caught
        in the middle of something (a node still joining) would have moved on."""
        if self.cluster is not None:
            self.cluster.clock.set_speed(1.0)

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


def settle_speed(span: float, minimum: float = 1.0, wall_seconds: float = 4.0) -> float:
    """A clock speed that plays ``span`` emulated seconds in about ``wall_seconds``."""
    return max(minimum, min(MAX_SETTLE_SPEED, span / wall_seconds))
