"""``gputui sim``: one line with the URL, a working kubeconfig, clean stop, bad scenario exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import yaml


def test_bad_scenario_is_one_line_exit_2() -> None:
    result = subprocess.run([sys.executable, "-m", "gputui", "sim", "--scenario", "no-such"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "no-such" in result.stderr
    assert "Traceback" not in result.stderr


def test_serves_until_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", "empty", "--kubeconfig-out",
         str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert f"export KUBECONFIG={config}" in line and "http://127.0.0.1:" in line
        server = yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"]
        with urllib.request.urlopen(server + "/version", timeout=10) as response:
            assert json.loads(response.read())["major"] == "1"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0 and "Traceback" not in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_two_sims_named_contexts_merge_into_one_kubeconfig(tmp_path: Path) -> None:
    """``--kubeconfig-context`` names the context and cluster, so two sims' kubeconfigs
    merge (``KUBECONFIG=a:b``) into two contexts for ``:ctx`` (README's recipe)."""
    from gputui.settings import Settings
    from gputui.sources.contexts import list_contexts

    processes, configs = [], []
    try:
        for name in ("lab", "prod-eu"):
            config = tmp_path / f"{name}.yaml"
            configs.append(config)
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "gputui", "sim", "--scenario", "empty",
                 "--kubeconfig-out", str(config), "--kubeconfig-context", name],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        urls = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            urls.append(line.split("serving the Kubernetes API at ", 1)[1].split(" ;")[0])
        entries = list_contexts(Settings(), environ={"KUBECONFIG": f"{configs[0]}:{configs[1]}"})
        assert [(e.key, e.server) for e in entries] == [("lab", urls[0]), ("prod-eu", urls[1])]
        assert [e.current for e in entries] == [True, False]
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
