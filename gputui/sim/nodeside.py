"""What lives on the emulated nodes rather than in the API: container logs and ports.

A real API server reads pod logs from the kubelet and proxies ``pods/proxy`` to a container
port. The emulated components write their log lines here and register the HTTP handlers
their containers would serve (dcgm-exporter's ``:9400/metrics``); the API server's
``pods/log`` and ``pods/proxy`` read them back.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable

ProxyResponse = tuple[int, str, bytes]  # status, content type, body
ProxyHandler = Callable[[str, str], Awaitable[ProxyResponse]]  # (method, path with query)

LOG_LINES_KEPT = 500


class NodeSide:
    """Container logs and container ports of the emulated pods, keyed by namespace and pod."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[tuple[str, str, str], deque[str]] = {}
        self._ports: dict[tuple[str, str, int], ProxyHandler] = {}

    def log(self, namespace: str, pod: str, container: str, line: str) -> None:
        """Append one line (already timestamped if the component does so) to a container log."""
        with self._lock:
            self._logs.setdefault((namespace, pod, container), deque(maxlen=LOG_LINES_KEPT)).append(line)

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int | None = None) -> list[str] | None:
        """Lines of one container (the pod's first logged container when ``None``).

        Returns ``None`` when the container has never logged (the API answers 400/404 then).
        """
        with self._lock:
            if container is None:
                matches = [key for key in self._logs if key[0] == namespace and key[1] == pod]
                if not matches:
                    return None
                container = matches[0][2]
            lines = self._logs.get((namespace, pod, container))
            if lines is None:
                return None
            out = list(lines)
        return out[-tail_lines:] if tail_lines else out

    def containers_logged(self, namespace: str, pod: str) -> list[str]:
        with self._lock:
            return [key[2] for key in self._logs if key[0] == namespace and key[1] == pod]

    def forget_pod(self, namespace: str, pod: str) -> None:
        """Drop logs and ports of a deleted pod."""
        with self._lock:
            for key in [k for k in self._logs if k[0] == namespace and k[1] == pod]:
                del self._logs[key]
            for pkey in [k for k in self._ports if k[0] == namespace and k[1] == pod]:
                del self._ports[pkey]

    def serve(self, namespace: str, pod: str, port: int, handler: ProxyHandler) -> None:
        """Register what a container serves on ``port`` (reachable through ``pods/proxy``)."""
        with self._lock:
            self._ports[(namespace, pod, port)] = handler

    def handler(self, namespace: str, pod: str, port: int | None) -> ProxyHandler | None:
        """The handler for a pod port; with ``port=None`` the pod's only registered port."""
        with self._lock:
            if port is not None:
                return self._ports.get((namespace, pod, port))
            found = [h for k, h in self._ports.items() if k[0] == namespace and k[1] == pod]
            return found[0] if len(found) == 1 else None
