"""Fixtures for source tests: the emulated API server with a 403 hook, and its kubeconfig."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from gputui.sim.cluster import EmulatedCluster
from tests.conftest import hook_server_requests


@pytest.fixture
def forbidden_paths(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Request paths containing any of these strings answer 403, as RBAC would.

    Request this fixture before ``api_only``.
    """
    paths: set[str] = set()

    def forbid(request: web.Request) -> web.StreamResponse | None:
        if not any(p in request.path for p in paths):
            return None
        return web.json_response(
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": f'{request.path} is forbidden: User "operator" cannot list',
             "reason": "Forbidden", "code": 403}, status=403)

    hook_server_requests(monkeypatch, forbid)
    return paths


@pytest.fixture
def cluster(forbidden_paths: set[str], api_only: EmulatedCluster) -> EmulatedCluster:
    """``api_only`` started after the 403 hook is installed."""
    return api_only


@pytest.fixture
def kubeconfig(cluster: EmulatedCluster, tmp_path: Path) -> Path:
    return cluster.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def restart() -> Iterator[Callable[[EmulatedCluster], EmulatedCluster]]:
    """Start a new API server on the port of a stopped one, over the same store (etcd
    survives an API server restart)."""
    started: list[EmulatedCluster] = []

    def again(old: EmulatedCluster) -> EmulatedCluster:
        new = EmulatedCluster(run_controllers=False, port=old.port, clock=old.clock)
        new.store = old.store
        new.start()
        started.append(new)
        return new

    yield again
    for cluster in started:
        cluster.stop()
