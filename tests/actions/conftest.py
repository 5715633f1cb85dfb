"""Fixtures for action tests: the emulated API server, a request log, and a KubeWriter on it.

Everything goes over real HTTP through the real ``kubernetes`` client: the writer under test
is the one the app uses.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from gputui.sim import apiserver
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.kubeconfig import load_target
from gputui.sources.writer import KubeWriter


@pytest.fixture
def request_log(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every request the emulated server receives, as ``(method, path)``.

    Wraps the server's app factory with one recording middleware (test-only); request this
    fixture before any cluster fixture.
    """
    seen: list[tuple[str, str]] = []
    original = apiserver.build_app

    def build_app(*args: object, **kwargs: object) -> web.Application:
        app = original(*args, **kwargs)  # type: ignore[arg-type]

        @web.middleware
        async def record(request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                         ) -> web.StreamResponse:
            seen.append((request.method, request.path))
            return await handler(request)

        app.middlewares.insert(0, record)
        return app

    monkeypatch.setattr(apiserver, "build_app", build_app)
    return seen


@pytest.fixture
def server(request_log: list[tuple[str, str]], api_only: EmulatedCluster) -> EmulatedCluster:
    """``api_only`` (empty store, no controllers) with the request log installed."""
    return api_only


def writer_for(cluster: EmulatedCluster, tmp_path: Path, read_only: bool = False) -> KubeWriter:
    """A KubeWriter loaded from a kubeconfig file, as the app builds it."""
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    return KubeWriter(load_target(str(config)), read_only=read_only)


@pytest.fixture
def writer(server: EmulatedCluster, tmp_path: Path) -> Iterator[KubeWriter]:
    made = writer_for(server, tmp_path)
    yield made
    made.close()
