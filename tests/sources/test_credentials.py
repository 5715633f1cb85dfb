"""Credentials as client-go handles them: token files trimmed and re-read, key data never on
disk, a token no header can carry refused in a sentence that does not quote it."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from gputui.sim.cluster import EmulatedCluster
from gputui.sources import keyfiles
from gputui.sources.credentials import TOKEN_FILE_PERIOD, FileToken
from gputui.sources.errors import ApiStatusError, SourceError
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.secrets import scrub

TOKEN = "planted-Secret-Token-4f1d9a"
KEY_PEM = (b"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
           b"planted\n-----END PRIVATE KEY-----\n")


def kubeconfig(path: Path, server: str, user: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "ops", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "ops"}}],
        "current-context": "c"}))
    return path


@pytest.fixture
def guarded(api_only: EmulatedCluster) -> EmulatedCluster:
    """The emulated server accepting only :data:`TOKEN`, as a real one checks tokens."""
    api_only.set_tokens(frozenset({TOKEN}))
    return api_only


def test_token_file_with_trailing_newline_is_sent_trimmed(guarded: EmulatedCluster,
                                                           tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"  {TOKEN}\n")
    target = load_target(str(kubeconfig(tmp_path / "kc", guarded.url,
                                        {"tokenFile": "token"})), environ={})
    http = KubeHttp(target.configuration)
    try:
        assert http.get("/api/v1/nodes")["kind"] == "NodeList"
    finally:
        http.close()


def test_the_emulated_server_refuses_another_token(guarded: EmulatedCluster,
                                                   tmp_path: Path) -> None:
    """The check above could not pass by accident: a wrong token is a 401, as on a real one."""
    target = load_target(str(kubeconfig(tmp_path / "kc", guarded.url, {"token": "wrong-one"})),
                         environ={})
    http = KubeHttp(target.configuration)
    try:
        with pytest.raises(ApiStatusError) as caught:
            http.get("/api/v1/nodes")
    finally:
        http.close()
    assert caught.value.code == 401


def test_token_file_wins_over_token_and_is_reread_each_minute(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("first-token\n")
    now = [0.0]
    source = FileToken(str(path), "ops", clock=lambda: now[0])
    assert source.bearer() == "first-token"
    path.write_text("rotated-token\n")
    now[0] = TOKEN_FILE_PERIOD - 1
    assert source.bearer() == "first-token"  # cached, as client-go caches it for a minute
    now[0] = TOKEN_FILE_PERIOD
    assert source.bearer() == "rotated-token"
    path.unlink()  # a failed re-read keeps the last good token
    now[0] = 2 * TOKEN_FILE_PERIOD
    assert source.bearer() == "rotated-token"
    (tmp_path / "t2").write_text("file-token\n")
    target = load_target(str(kubeconfig(tmp_path / "kc", "http://x:1", {
        "token": "inline-token", "tokenFile": "t2"})), environ={})
    assert target.configuration.auth_settings()["BearerToken"]["value"] == "Bearer file-token"


def test_empty_token_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("\n  \n")
    with pytest.raises(SourceError, match="tokenFile .* is empty"):
        load_target(str(kubeconfig(tmp_path / "kc", "http://x:1", {"tokenFile": "token"})),
                    environ={})


def test_token_with_a_line_break_is_refused_without_quoting_it(tmp_path: Path) -> None:
    """client-go does not trim ``token:`` (and Go refuses the header): neither does gputui,
    but the refusal is a sentence, not urllib3's ``Invalid header value b'Bearer …'``."""
    with pytest.raises(SourceError) as caught:
        load_target(str(kubeconfig(tmp_path / "kc", "http://x:1", {"token": f"{TOKEN}\n"})),
                    environ={})
    assert "line break" in str(caught.value) and "'ops'" in str(caught.value)
    assert TOKEN not in str(caught.value)


def test_every_loaded_credential_is_scrubbed(tmp_path: Path) -> None:
    kubeconfig(tmp_path / "kc", "https://x:1", {
        "token": TOKEN, "username": "admin", "password": "planted-Password-77",
        "client-key-data": base64.b64encode(KEY_PEM).decode(),
        "client-certificate-data": base64.b64encode(b"cert").decode()})
    load_target(str(tmp_path / "kc"), environ={})
    leaked = (f"ValueError: Invalid header value b'Bearer {TOKEN}\\n' password=planted-Password-77"
              f" {base64.b64encode(KEY_PEM).decode()} "
              f"{base64.b64encode(b'admin:planted-Password-77').decode()}")
    cleaned = scrub(leaked)
    for secret in (TOKEN, "planted-Password-77", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw",
                   base64.b64encode(KEY_PEM).decode()[:40]):
        assert secret not in cleaned
    assert "Invalid header value" in cleaned


def test_key_data_never_reaches_the_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    target = load_target(str(kubeconfig(tmp_path / "kc", "https://x:1", {
        "client-key-data": base64.b64encode(KEY_PEM).decode(),
        "client-certificate-data": base64.b64encode(b"cert").decode()})), environ={})
    key_file = str(target.configuration.key_file)
    with open(key_file, "rb") as handle:  # OpenSSL opens it by path, as urllib3 will
        assert handle.read() == KEY_PEM
    assert key_file.startswith("/proc/self/fd/")
    assert list(temp.iterdir()) == []


def test_fallback_key_files_are_private_and_removed(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Without memfd: a 0600 file in a 0700 directory, gone after :func:`remove_all`."""
    monkeypatch.setattr(keyfiles, "use_memfd", False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = Path(keyfiles.materialize(KEY_PEM, "client-key"))
    try:
        assert path.read_bytes() == KEY_PEM
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        keyfiles.rewrite(str(path), b"new")
        assert path.read_bytes() == b"new"
    finally:
        keyfiles.remove_all()
    assert not path.exists() and not path.parent.exists()
    assert os.listdir(tmp_path) == []


def test_in_cluster_token_is_trimmed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pod's projected token file ends in a newline too; the client sent it as read."""
    from kubernetes.config import incluster_config

    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "ca.crt").write_text("ca")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(tmp_path / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(tmp_path / "ca.crt"))
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443",
           "HOME": str(tmp_path)}
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    target = load_target(environ=env)
    assert target.context == "in-cluster"
    assert target.configuration.auth_settings()["BearerToken"]["value"] == f"Bearer {TOKEN}"


def test_an_unexpected_failure_while_connecting_is_said_not_fatal(
        api_only: EmulatedCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The connect thread used to die on anything but a SourceError, leaving the header at
    "connecting…" forever (always so with --read-only, where no other worker says a thing)."""
    import time

    from gputui.settings import Thresholds
    from gputui.sources import kube

    calls: list[int] = []

    def probe(http: KubeHttp) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError(f"Invalid header value b'Bearer {TOKEN}\\n'")

    monkeypatch.setattr(kube, "probe", probe)
    target = load_target(str(kubeconfig(tmp_path / "kc", api_only.url, {"token": TOKEN})),
                         environ={})
    source = kube.KubeSource(target, Thresholds(), backoff_cap=0.2, xid_every=0)
    said: list[str] = []
    source.start(lambda snapshot: None, lambda status: said.append(status.message))
    try:
        deadline = time.monotonic() + 20
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        source.stop()
    assert len(calls) >= 2  # the thread lived on and tried again
    failure = next(m for m in said if "cannot connect" in m)
    assert failure.startswith("cannot connect: ValueError: Invalid header value")
    assert TOKEN not in failure


def test_prometheus_credentials_are_scrubbed_too() -> None:
    from gputui.settings import Settings
    from gputui.sources.connect import prometheus_options

    prometheus_options(Settings(prometheus_url="http://prom:9090",
                                prometheus_token="planted-Prom-Token-31",
                                prometheus_headers={"X-Scope-OrgID": "planted-Org-Key-77"}))
    assert scrub("planted-Prom-Token-31 planted-Org-Key-77") == "[REDACTED] [REDACTED]"
