"""Exec credential plugins: run once, cached until expiry, refreshed in one background
thread, never concurrently, stderr kept off the terminal, failures one line."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.errors import SourceError
from gputui.sources.execplugin import ExecCredentials, ExecPluginError, plugin_from_config
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from tests.sources.plugin_script import (
    TOKENS,
    overlapped,
    plugin_kubeconfig,
    runs,
    write_plugin,
)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return write_plugin(tmp_path)


def exec_config(plugin: Path, lifetime: float = 12, **extra: object) -> dict[str, object]:
    config: dict[str, object] = {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
        "interactiveMode": "IfAvailable",
        "env": [{"name": "PLUGIN_STATE", "value": str(plugin.parent / "plugin-state")},
                {"name": "PLUGIN_LIFETIME", "value": str(lifetime)}]}
    config.update(extra)
    return config


def test_short_tokens_run_once_per_lifetime_never_at_once(
        api_only: EmulatedCluster, plugin: Path, tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    """Eight threads request for 7.5 s with 3-second tokens: every request authenticated
    with a token the server accepts, the plugin run at most once per lifetime."""
    api_only.set_tokens(TOKENS)
    lifetime, window = 3.0, 7.5
    target = load_target(str(plugin_kubeconfig(tmp_path / "kc", api_only.url, plugin,
                                               lifetime)), environ={}, may_prompt=False)
    assert target.credentials is not None and len(runs(plugin)) == 1
    http = KubeHttp(target.configuration)
    failures: list[BaseException] = []
    deadline = time.monotonic() + window

    def hammer() -> None:
        while time.monotonic() < deadline:
            try:
                http.get("/api/v1/nodes")
            except SourceError as error:
                failures.append(error)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        http.close()
        target.credentials.stop()
    assert failures == []
    assert 2 <= len(runs(plugin)) <= math.ceil(window / lifetime) + 1
    assert not overlapped(plugin)
    assert all(not r["interactive"] and not r["stdin_tty"] for r in runs(plugin))
    assert "PLUGIN-STDERR-MARKER" not in capfd.readouterr().err


def test_failure_is_one_line_said_with_the_retry(plugin: Path,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    (plugin.parent / "plugin-state" / "fail").touch()
    credentials = ExecCredentials(plugin_from_config(exec_config(plugin), "/", None))
    said: list[str | None] = []
    credentials.on_status = said.append
    credentials.start(may_prompt=False)
    try:
        with pytest.raises(ExecPluginError) as caught:
            credentials.current()
    finally:
        credentials.stop()
    assert str(caught.value) == ("credential plugin exec-plugin.py failed: exit status 3: "
                                 "login expired: run the SSO login again")
    assert said == [f"{caught.value}; retrying in 10 s"]
    assert "PLUGIN-STDERR-MARKER" not in capfd.readouterr().err


def test_recovery_clears_the_failure(plugin: Path) -> None:
    fail = plugin.parent / "plugin-state" / "fail"
    fail.touch()
    now = [1000.0]
    credentials = ExecCredentials(plugin_from_config(exec_config(plugin), "/", None),
                                  clock=lambda: now[0])
    said: list[str | None] = []
    credentials.on_status = said.append
    credentials._run_once(may_prompt=False)
    fail.unlink()
    credentials._run_once(may_prompt=False)
    assert said[-1] is None and credentials.current().token == "exec-token-2"


@pytest.mark.parametrize("mode, terminal, interactive", [
    ("Never", True, False), ("IfAvailable", True, True), ("IfAvailable", False, False)])
def test_interactive_mode_as_client_go(plugin: Path, mode: str, terminal: bool,
                                       interactive: bool) -> None:
    exec_plugin = plugin_from_config(exec_config(plugin, interactiveMode=mode), "/", None)
    assert exec_plugin.run(may_prompt=True, stdin_is_terminal=terminal).token
    assert runs(plugin)[-1]["interactive"] is interactive


def test_always_without_a_terminal_says_so(plugin: Path) -> None:
    exec_plugin = plugin_from_config(exec_config(plugin, interactiveMode="Always"), "/", None)
    with pytest.raises(ExecPluginError, match=r"needs a terminal \(interactiveMode: Always\)"):
        exec_plugin.run(may_prompt=False)
    assert runs(plugin) == []


def test_v1_needs_interactive_mode_and_v1beta1_defaults_it(plugin: Path) -> None:
    with pytest.raises(SourceError, match="interactiveMode must be one of"):
        plugin_from_config(exec_config(plugin, interactiveMode=None), "/", None)
    beta = plugin_from_config(exec_config(
        plugin, interactiveMode=None, apiVersion="client.authentication.k8s.io/v1beta1"),
        "/", None)
    assert beta.interactive_mode == "IfAvailable"


def test_output_that_is_not_a_credential_is_not_quoted(tmp_path: Path) -> None:
    script = tmp_path / "leaky.sh"
    script.write_text("#!/bin/sh\necho '{\"kind\": \"Nope\", \"token\": \"planted-Leak-123\"}'\n")
    script.chmod(0o755)
    exec_plugin = plugin_from_config({"apiVersion": "client.authentication.k8s.io/v1",
                                      "command": str(script), "interactiveMode": "Never"},
                                     "/", None)
    with pytest.raises(ExecPluginError) as caught:
        exec_plugin.run(may_prompt=False)
    assert "kind is not ExecCredential" in str(caught.value)
    assert "planted-Leak-123" not in str(caught.value)


def test_relative_command_is_resolved_from_the_kubeconfig(plugin: Path) -> None:
    found = plugin_from_config(exec_config(plugin, command="./exec-plugin.py"),
                               str(plugin.parent), None)
    assert found.command == str(plugin)


def test_a_certificate_pair_is_kept_in_memory(tmp_path: Path) -> None:
    """A plugin may answer a client certificate and key instead of a token (client-go's
    ``clientCertificateData``/``clientKeyData``): held where OpenSSL can open them, not in
    ``$TMPDIR``, and the key is scrubbed like a token."""
    import json

    from gputui.sources.secrets import scrub

    key = "-----BEGIN PRIVATE KEY-----\nplantedExecKeyLine0123456789\n-----END PRIVATE KEY-----\n"
    answer = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
              "status": {"clientCertificateData": "CERT PEM", "clientKeyData": key}}
    script = tmp_path / "cert-plugin.sh"
    script.write_text(f"#!/bin/sh\ncat <<'END'\n{json.dumps(answer)}\nEND\n")
    script.chmod(0o755)
    kubeconfig = plugin_kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", script, 12,
                                   interactiveMode="Never")
    target = load_target(str(kubeconfig), environ={}, may_prompt=False)
    assert target.credentials is not None
    target.credentials.stop()
    configuration = target.configuration
    with open(str(configuration.key_file)) as handle:
        assert handle.read() == key
    with open(str(configuration.cert_file)) as handle:
        assert handle.read() == "CERT PEM"
    assert str(configuration.key_file).startswith("/proc/self/fd/")
    assert "plantedExecKeyLine0123456789" not in scrub("a body line: plantedExecKeyLine0123456789")
