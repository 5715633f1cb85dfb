"""``gputui check`` never prints a credential, and leaves no key file behind, whatever ends it.

A token, a basic-auth password and client key data are planted in the kubeconfig; each run
forces a failure (a token no header can carry, a server that is down, a 401, a crash inside
the reader) and everything gputui wrote (stdout, stderr, the debug log) is searched for them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.helpers import KEY_LINE, TOKEN, assert_no_secret, free_port, planted
from tests.sources.helpers import node

Run = Callable[..., subprocess.CompletedProcess[str]]
REPO = Path(__file__).resolve().parents[2]


def run_both(gputui: Run, kubeconfig: Path, log: Path) -> list[subprocess.CompletedProcess[str]]:
    """``check`` and ``check --json`` with the debug log on."""
    return [gputui("check", *extra, "--kubeconfig", str(kubeconfig), "--log-file", str(log))
            for extra in ((), ("--json",))]


@pytest.mark.parametrize("case", ["bad-header", "server-down", "unauthorized"])
def test_failures_print_no_secret(gputui: Run, api_only: EmulatedCluster, tmp_path: Path,
                                  case: str) -> None:
    server = api_only.url
    user: dict[str, Any] = {}
    if case == "bad-header":  # the token file case, as an inline token (not trimmed)
        user = {"token": f"{TOKEN}\n"}
    elif case == "server-down":
        server = f"http://127.0.0.1:{free_port()}"
    else:
        api_only.set_tokens(frozenset({"another-token"}))
    log = tmp_path / "debug.log"
    for result in run_both(gputui, planted(tmp_path / "kc", server, **user), log):
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert_no_secret(result.stdout, result.stderr)
    assert log.exists()
    assert_no_secret(log.read_text())


def test_a_crash_inside_the_reader_prints_no_secret(api_only: EmulatedCluster,
                                                    tmp_path: Path) -> None:
    """An unexpected exception quoting the header (urllib3's words) is scrubbed."""
    kubeconfig = planted(tmp_path / "kc", api_only.url)
    log = tmp_path / "debug.log"
    code = ("import sys, gputui.sources.oneshot as o\n"
            "def boom(*a, **k):\n"
            "    secret = 'Bearer ' + " + repr(TOKEN) + " + '\\n'\n"
            "    raise ValueError(f'Invalid header value {secret.encode()!r}')\n"
            "o.read_objects = boom\n"
            "import gputui.sources.connect as c; c.read_objects = boom\n"
            "from gputui.cli import main\n"
            f"sys.exit(main(['check', '--kubeconfig', {str(kubeconfig)!r}, "
            f"'--log-file', {str(log)!r}]))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120,
                            check=False)
    assert result.returncode == 2, result.stderr
    assert "internal error: ValueError: Invalid header value" in result.stderr
    assert_no_secret(result.stdout, result.stderr, log.read_text())


def test_token_file_with_trailing_newline_works_like_kubectl(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    api_only.set_tokens(frozenset({TOKEN}))
    api_only.store.create("nodes", node("gpu-0"))
    (tmp_path / "token").write_text(TOKEN + "\n")
    kubeconfig = planted(tmp_path / "kc", api_only.url, token=None, tokenFile="token")
    log = tmp_path / "debug.log"
    for result in run_both(gputui, kubeconfig, log):
        assert result.returncode in (0, 1), result.stderr
        assert_no_secret(result.stdout, result.stderr)
    assert "gpu-0" in run_both(gputui, kubeconfig, log)[1].stdout
    assert_no_secret(log.read_text())


def _check_until_mid_request(kubeconfig: Path, temp: Path, seen: list[tuple[str, str]],
                             memfd: bool) -> subprocess.Popen[str]:
    code = ("import sys, gputui.sources.keyfiles as k\n"
            f"k.use_memfd = {memfd!r}\n"
            "from gputui.cli import main\n"
            f"sys.exit(main(['check', '--kubeconfig', {str(kubeconfig)!r}]))\n")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                               env=dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(temp)))
    deadline = time.monotonic() + 60
    while not seen and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert seen, "gputui check never reached the server"
    return process


def _files_holding_the_key(temp: Path) -> list[Path]:
    return [p for p in temp.rglob("*") if p.is_file() and KEY_LINE.encode() in p.read_bytes()]


@pytest.mark.parametrize("memfd, sig, code", [
    (True, signal.SIGTERM, -signal.SIGTERM), (False, signal.SIGTERM, -signal.SIGTERM),
    (False, signal.SIGHUP, -signal.SIGHUP), (False, signal.SIGINT, 130)],
    ids=["memfd-SIGTERM", "private-dir-SIGTERM", "private-dir-SIGHUP", "private-dir-SIGINT"])
def test_a_signal_mid_request_leaves_no_key_file(request_log: list[tuple[str, str]],
                                                 api_only: EmulatedCluster, tmp_path: Path,
                                                 memfd: bool, sig: signal.Signals,
                                                 code: int) -> None:
    api_only.inject("latency:30000")  # every request waits: check is mid-request when killed
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = _check_until_mid_request(planted(tmp_path / "kc", api_only.url), temp,
                                       request_log, memfd)
    try:
        if not memfd:  # the portable fallback does hold a file while running: the test sees it
            assert _files_holding_the_key(temp)
        process.send_signal(sig)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code
    assert _files_holding_the_key(temp) == []
    assert list(temp.iterdir()) == []


def test_check_runs_an_exec_plugin_once(gputui: Run, api_only: EmulatedCluster,
                                        tmp_path: Path) -> None:
    from tests.sources.plugin_script import TOKENS, plugin_kubeconfig, runs, write_plugin

    api_only.set_tokens(TOKENS)
    api_only.store.create("nodes", node("gpu-0"))
    plugin = write_plugin(tmp_path)
    kubeconfig = plugin_kubeconfig(tmp_path / "kc", api_only.url, plugin, 12)
    result = gputui("check", "--json", "--kubeconfig", str(kubeconfig))
    assert result.returncode in (0, 1), result.stderr
    assert "gpu-0" in result.stdout
    assert len(runs(plugin)) == 1
    (plugin.parent / "plugin-state" / "fail").touch()
    failed = gputui("check", "--kubeconfig", str(kubeconfig))
    assert failed.returncode == 2
    assert failed.stderr.strip() == ("gputui: credential plugin exec-plugin.py failed: exit "
                                     "status 3: login expired: run the SSO login again")
