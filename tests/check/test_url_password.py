"""A ``user:password@`` in the server URL is a credential: sent as basic auth, shown nowhere.

Issue 27: a kubeconfig may say ``server: https://alice:PASSWORD@host``; the header, the
summary, ``check --format markdown``, the debug log and a recording's header all showed the
password. The userinfo is now taken out where the URL is loaded
(:mod:`gputui.sources.userinfo`), sent as ``Authorization: Basic`` (as kubectl's Go client
does) and remembered for redaction.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.kubeconfig import load_target
from tests.conftest import hook_server_requests
from tests.sources.helpers import node

Run = Callable[..., subprocess.CompletedProcess[str]]
USER, PASSWORD = "alice", "URL-Pa55word-7d1e"


def url_kubeconfig(path: Path, server_url: str, **user: str) -> Path:
    """A kubeconfig whose server URL carries ``alice:PASSWORD@`` (``user``: its user entry)."""
    scheme, _, rest = server_url.partition("://")
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"{scheme}://{USER}:{PASSWORD}@{rest}"}}],
        "users": [{"name": "u", "user": dict(user)}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c"}))
    return path


@pytest.fixture
def authorizations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Authorization header of every request the emulated server receives."""
    seen: list[str] = []

    def note(request: web.Request) -> None:
        seen.append(request.headers.get("Authorization", ""))

    hook_server_requests(monkeypatch, note)
    return seen


def test_the_target_keeps_no_userinfo_and_sends_basic_auth(tmp_path: Path) -> None:
    target = load_target(str(url_kubeconfig(tmp_path / "kc", "https://gpu.example:6443")))
    assert target.server == "https://gpu.example:6443"
    assert target.configuration.host == "https://gpu.example:6443"
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert target.configuration.auth_settings()["BearerToken"]["value"] == expected


def test_a_token_in_the_user_entry_wins_over_the_url(tmp_path: Path) -> None:
    target = load_target(str(url_kubeconfig(tmp_path / "kc", "https://gpu.example:6443",
                                            token="user-entry-token-1")))
    assert target.configuration.auth_settings()["BearerToken"]["value"] == (
        "Bearer user-entry-token-1")
    assert PASSWORD not in target.server


def test_check_in_every_format_and_the_debug_log_carry_no_password(
        authorizations: list[str], gputui: Run, api_only: EmulatedCluster,
        tmp_path: Path) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    kubeconfig = url_kubeconfig(tmp_path / "kc", api_only.url)
    log = tmp_path / "debug.log"
    outputs = []
    for extra in ((), ("--json",), ("--format", "markdown"), ("--format", "table")):
        result = gputui("check", *extra, "--kubeconfig", str(kubeconfig), "--log-file",
                        str(log))
        assert result.returncode in (0, 1), result.stderr
        outputs.append(result)
    markdown = outputs[2].stdout
    assert f"- Cluster: {api_only.url}" in markdown.replace("\\", "")
    for text in [r.stdout + r.stderr for r in outputs] + [log.read_text()]:
        assert PASSWORD not in text
        assert f"{USER}:" not in text
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert authorizations and set(authorizations) == {expected}


def test_a_down_server_is_named_without_the_password(gputui: Run, tmp_path: Path) -> None:
    from tests.helpers import free_port

    kubeconfig = url_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{free_port()}")
    result = gputui("check", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 2
    assert "127.0.0.1" in result.stderr
    assert PASSWORD not in result.stderr and f"{USER}:" not in result.stderr
