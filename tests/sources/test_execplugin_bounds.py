"""An exec credential plugin is bounded (issue 27): one that hangs with a child holding its
pipe ends within the run's time limit with its whole process group; one that prints 200 MB
is refused without the memory; its stderr keeps only a tail."""

from __future__ import annotations

import os
import stat
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from gputui.sources import execplugin
from gputui.sources.execplugin import ExecPlugin, ExecPluginError, plugin_from_config


def _plugin(tmp_path: Path, body: str) -> ExecPlugin:
    script = tmp_path / "plugin.py"
    script.write_text(f"#!{sys.executable}\nimport os, subprocess, sys, time\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return plugin_from_config({"apiVersion": "client.authentication.k8s.io/v1beta1",
                               "command": str(script)}, str(tmp_path), None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as status:  # a zombie is gone, waiting for its reaper
        return status.read().split(") ", 1)[1][0] != "Z"


def test_a_hanging_plugin_and_its_children_end_at_the_time_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execplugin, "RUN_TIMEOUT", 2.0)
    pid_file = tmp_path / "child.pid"
    plugin = _plugin(tmp_path, (
        "child = subprocess.Popen(['sleep', '300'])  # inherits stdout: holds the pipe\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)"))
    started = time.monotonic()
    with pytest.raises(ExecPluginError, match=r"^credential plugin plugin.py did not answer "
                                              r"within 2 s$"):
        plugin.run(may_prompt=False, stdin_is_terminal=False)
    assert time.monotonic() - started < 20
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the plugin's child outlived the run"


def test_a_plugin_printing_200_mb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, (
        "chunk = b'x' * (1 << 20)\n"
        "for _ in range(200):\n    sys.stdout.buffer.write(chunk)\n"
        "sys.stdout.flush()"))
    tracemalloc.start()
    try:
        with pytest.raises(ExecPluginError, match="printed more than 1 MB: not a credential"):
            plugin.run(may_prompt=False, stdin_is_terminal=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak >> 20} MB"


def test_fifty_mb_of_stderr_keeps_its_tail(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, (
        "for _ in range(50):\n    sys.stderr.write('noise ' * 174762 + '\\n')\n"
        "sys.stderr.write('login expired: run the SSO login again\\n')\nsys.exit(3)"))
    tracemalloc.start()
    try:
        with pytest.raises(ExecPluginError) as raised:
            plugin.run(may_prompt=False, stdin_is_terminal=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(raised.value) == ("credential plugin plugin.py failed: exit status 3: login "
                                 "expired: run the SSO login again")
    assert peak < 16 << 20, f"peak {peak >> 20} MB"
