"""Demo mode: start the emulated GPU cluster and connect to it like any real cluster.

``gputui --demo`` and ``gputui check --demo`` both come through here, so the emulated
cluster is always read over real HTTP with a real kubeconfig: the demo exercises exactly
the code path an operator's cluster does.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from gputui.sources.errors import SourceError
from gputui.sources.kubeconfig import KubeTarget, load_target


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
        self._dir = Path(tempfile.mkdtemp(prefix="gputui-demo-"))
        path = self.cluster.write_kubeconfig(self._dir / "kubeconfig")
        return load_target(str(path))

    def now(self) -> float:
        """The emulated clock: the domain's "now" for ages and timeouts in demo mode."""
        return float(self.cluster.clock.now()) if self.cluster is not None else time.time()

    def settle(self, timeout: float = 20.0) -> None:
        """Let the scenario reach the state it plants, for a one-shot read (``check``).

        Uses the emulated operator's own convergence signal when it offers one
        (``wait_settled(timeout)``); otherwise waits until the scenario's timeline has
        played and a few emulated minutes more, with the clock run fast meanwhile.
        """
        operator = getattr(self.cluster, "operator", None)
        waiter = getattr(operator, "wait_settled", None)
        if callable(waiter):
            self.cluster.call(waiter(timeout), timeout=timeout + 5.0)
            return
        self._settle_by_timeline(timeout)

    def _settle_by_timeline(self, timeout: float) -> None:
        clock = self.cluster.clock
        scenario = getattr(getattr(self.cluster, "operator", None), "scenario", None)
        events = getattr(scenario, "timeline", ()) or ()
        last = max((float(getattr(e, "at", 0.0)) for e in events), default=0.0)
        target = clock.now() + last + 300.0
        original = clock.speed
        clock.set_speed(max(original, (last + 300.0) / max(1.0, timeout / 2)))
        deadline = time.monotonic() + timeout
        try:
            while clock.now() < target and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            clock.set_speed(original)

    def stop(self) -> None:
        """Stop the emulated cluster and remove its kubeconfig; safe to call twice."""
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
