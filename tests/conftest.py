"""Shared fixtures: paths to real tools and emulated clusters on loopback ports.

Area-specific fixtures live next to their tests (``tests/<area>/conftest.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from gputui.sim import apiserver
from gputui.sim.cluster import EmulatedCluster

REPO = Path(__file__).resolve().parent.parent


def _tool(env: str, local: Path, name: str) -> str:
    """A real tool's path; fail (not skip) when missing so CI can never pass without it."""
    candidate = os.environ.get(env) or (str(local) if local.exists() else None)
    if not candidate or not Path(candidate).exists():
        pytest.fail(f"{name} not found: run ./scripts/test.sh, which installs it")
    return candidate


# kubectl versions every kubectl test runs with: Debian's 1.20 (old clients must keep working)
# and 1.35 (what operators run today: protobuf bodies, watch-list, OpenAPI v3), both put in
# .tools/ by scripts/test.sh.
KUBECTLS: dict[str, tuple[str, Path]] = {
    "1.20": ("KUBECTL_FOR_TESTS", REPO / ".tools/kubectl/usr/bin/kubectl"),
    "1.35": ("KUBECTL_1_35_FOR_TESTS", REPO / ".tools/kubectl-1.35/kubectl"),
}


@pytest.fixture(scope="session", params=sorted(KUBECTLS))
def kubectl_version(request: pytest.FixtureRequest) -> str:
    """The kubectl minor version a kubectl test runs with (each test runs with both)."""
    return str(request.param)


@pytest.fixture(scope="session")
def kubectl_bin(kubectl_version: str) -> str:
    """The kubectl binary of ``kubectl_version`` (never the image's own kubectl)."""
    env, local = KUBECTLS[kubectl_version]
    return _tool(env, local, f"kubectl {kubectl_version}")


@pytest.fixture
def api_only() -> Iterator[EmulatedCluster]:
    """The emulated API server over an empty store, no controllers (API-level tests)."""
    cluster = EmulatedCluster(run_controllers=False)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


#: what a server hook does with a request: None lets it through, a response answers it
RequestHook = Callable[[web.Request], "web.StreamResponse | None"]


def hook_server_requests(monkeypatch: pytest.MonkeyPatch, hook: RequestHook) -> None:
    """Run ``hook`` on every request the emulated API servers started after this receive,
    before any handler (test-only: wraps the server's app factory with one middleware, so
    the server itself needs no test hook)."""
    original = apiserver.build_app

    def build_app(*args: object, **kwargs: object) -> web.Application:
        app = original(*args, **kwargs)  # type: ignore[arg-type]

        @web.middleware
        async def run_hook(request: web.Request,
                           handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                           ) -> web.StreamResponse:
            answer = hook(request)
            return answer if answer is not None else await handler(request)

        app.middlewares.insert(0, run_hook)
        return app

    monkeypatch.setattr(apiserver, "build_app", build_app)


@pytest.fixture
def request_log(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every request the emulated server receives, as ``(method, path)``; request this
    fixture before any cluster fixture."""
    seen: list[tuple[str, str]] = []
    hook_server_requests(monkeypatch, lambda request: seen.append(
        (request.method, request.path)))
    return seen


@pytest.fixture(autouse=True)
def _forget_credentials() -> Iterator[None]:
    """Each test starts with no remembered credential (``gputui.sources.secrets`` is
    process-wide: one test's planted token must not be scrubbed from another's text)."""
    from gputui.sources.secrets import forget_all

    forget_all()
    yield


@pytest.fixture
def request_queries(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every request the emulated server receives, as ``(method, path with its query)``:
    for what the path alone does not say (``dryRun=All``). Request it before any cluster
    fixture, like :func:`request_log` (both may be used together)."""
    seen: list[tuple[str, str]] = []
    hook_server_requests(monkeypatch, lambda request: seen.append(
        (request.method, request.path_qs)))
    return seen


@pytest.fixture
def utc() -> Iterator[None]:
    """Clock times print in UTC while the test runs (request it, or use it autouse)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


#: tests that take longest (node-id prefixes, longest first): under xdist they start first, so
#: the run does not end with one worker busy on a long test while the others idle. Only the
#: order changes; a stale entry costs time, never a test
SLOW_FIRST = (
    "tests/sim/test_pod_names.py::test_scale_5000",
    "tests/ui/test_tmux_",
    "tests/check/",
    "tests/ui/test_faults_ui.py",
    "tests/sources/test_sanitize_entry.py",
    "tests/sources/test_identity.py",
    "tests/domain/test_sanitize.py",
    "tests/sources/test_answers.py",
    "tests/ui/test_navigation.py",
    "tests/ui/test_node_list.py",
    "tests/ui/test_actions.py",
    "tests/ui/test_typeahead.py",
    "tests/sources/test_demo.py",
    "tests/sources/test_bookmarks.py",
)


def _slow_rank(item: pytest.Item) -> int:
    return next((rank for rank, prefix in enumerate(SLOW_FIRST)
                 if item.nodeid.startswith(prefix)), len(SLOW_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist (scripts/test.sh), the slowest tests first (a stable sort: every worker
    collects the same order, as xdist requires); a serial run keeps pytest's order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_slow_rank)


@pytest.fixture(scope="session")
def live_tape(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """Two emulated minutes of xid-storm recorded from a live KubeSource (real HTTP), once
    per test process: the replay source's tests and the replay TUI's read the same file."""
    from tests.fixtures.tapes import record_xid_storm

    path = tmp_path_factory.mktemp("live") / "xid-storm.tape"
    seen = record_xid_storm(path)
    assert "xid79_at" in seen, "the live session never showed XID 79"
    return path, seen
