"""A pod log is read as a bounded tail, whatever the server sends (issue 27: a server that
ignored ``tailLines`` sent 200 MB; ``l`` showed 1.37 million lines and memory stayed at
435 MB after the log was closed)."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.pods import LOG_READ_LIMIT, read_pod_log
from tests.conftest import hook_server_requests

LINE = "step 123456: loss=0.0421 lr=3e-4 tokens/s=181234 " + "x" * 60 + "\n"


def _ignoring_tail_lines(size: int) -> web.Response:
    """A log answer of ``size`` bytes of numbered lines, whatever ``tailLines`` said."""
    lines_per_chunk = 4096

    async def body() -> AsyncIterator[bytes]:
        count = size // len(LINE)
        for start in range(0, count, lines_per_chunk):
            yield "".join(f"{n:09d} {LINE}" for n in range(
                start, min(count, start + lines_per_chunk))).encode()

    return web.Response(body=body(), content_type="text/plain")


@pytest.fixture
def huge_logs(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    sizes: dict[str, int] = {}

    def answer(request: web.Request) -> web.StreamResponse | None:
        pod = request.path.split("/pods/")[-1].split("/")[0]
        if request.path.endswith("/log") and pod in sizes:
            return _ignoring_tail_lines(sizes[pod])
        return None

    hook_server_requests(monkeypatch, answer)
    return sizes


def _http(cluster: EmulatedCluster, tmp_path: Path) -> KubeHttp:
    return KubeHttp(load_target(str(cluster.write_kubeconfig(tmp_path / "kc"))).configuration)


def test_a_server_ignoring_tail_lines_costs_a_bounded_tail(
        huge_logs: dict[str, int], api_only: EmulatedCluster, tmp_path: Path) -> None:
    huge_logs["trainer"] = 20 << 20
    http = _http(api_only, tmp_path)
    tracemalloc.start()
    try:
        lines = read_pod_log(http, "ml", "trainer", tail_lines=200)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        http.close()
    count = (20 << 20) // len(LINE)
    assert len(lines) == 200
    assert lines[-1].startswith(f"{count - 1:09d} ") and lines[0].startswith(f"{count - 200:09d} ")
    assert peak < 16 << 20, f"peak {peak >> 20} MB for a 20 MB answer"


def test_past_the_read_limit_the_log_says_it_is_not_the_end(
        huge_logs: dict[str, int], api_only: EmulatedCluster, tmp_path: Path) -> None:
    huge_logs["trainer"] = LOG_READ_LIMIT + (8 << 20)
    http = _http(api_only, tmp_path)
    try:
        lines = read_pod_log(http, "ml", "trainer", tail_lines=50)
    finally:
        http.close()
    assert len(lines) == 51
    assert lines[0].startswith("[gputui: the server sent more than 64 MB for 50 lines")
    assert all(line.endswith("x" * 60) for line in lines[1:])
