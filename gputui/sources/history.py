"""In-memory history of DCGM samples for the sources that have no Prometheus behind them.

The exporter scrape and local NVML read current values only; the sparklines need the last
few minutes, so each node's samples are kept here, per series, bounded in length. Series not
seen for a whole history span (a pod that finished, a node scrolled off screen long ago) are
dropped, so memory follows what is on screen, not the size of the cluster.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from gputui.domain.metrics import NodeMetrics, Series, node_metrics

#: samples kept per series: two per braille cell over a wide pane
DEFAULT_SAMPLES = 240


class History:
    """Samples per node and series, oldest first; thread-safe."""

    def __init__(self, samples: int = DEFAULT_SAMPLES, keep_seconds: float = 600.0) -> None:
        self.samples = samples
        self.keep_seconds = keep_seconds
        self._lock = threading.Lock()
        self._nodes: dict[str, dict[tuple[tuple[str, str], ...], tuple[Mapping[str, str],
                                                                      deque[tuple[float, float]]]]] = {}
        self._last: dict[str, float] = {}

    def add(self, node: str, now: float,
            samples: Iterable[tuple[Mapping[str, str], float]]) -> None:
        """Record one read of ``node``: (labels with ``__name__``, value) pairs at ``now``."""
        with self._lock:
            series = self._nodes.setdefault(node, {})
            for labels, value in samples:
                key = tuple(sorted(labels.items()))
                entry = series.get(key)
                if entry is None:
                    entry = series[key] = (dict(labels), deque(maxlen=self.samples))
                entry[1].append((now, value))
            self._last[node] = now
            self._prune(node, now)

    def _prune(self, node: str, now: float) -> None:
        """Drop series that ended longer ago than the history reaches back."""
        series = self._nodes[node]
        horizon = now - self.keep_seconds
        for key in [k for k, (_, points) in series.items() if points[-1][0] < horizon]:
            del series[key]

    def series(self, node: str) -> list[Series]:
        """The node's series as :data:`~gputui.domain.metrics.Series` (copies)."""
        with self._lock:
            return [(labels, tuple(points)) for labels, points in self._nodes.get(node, {}).values()]

    def node(self, node: str) -> NodeMetrics:
        """The node's GPUs from what was recorded."""
        return node_metrics(node, self.series(node))

    def forget_except(self, keep: Sequence[str], max_nodes: int) -> None:
        """Drop the least recently read nodes beyond ``max_nodes`` (``keep`` stays)."""
        with self._lock:
            if len(self._nodes) <= max_nodes:
                return
            ordered = sorted(self._last, key=self._last.__getitem__)
            for node in ordered[:len(self._nodes) - max_nodes]:
                if node not in keep:
                    self._nodes.pop(node, None)
                    self._last.pop(node, None)
