"""The public CLI contract: version, help, scenarios and one-line errors with exit 2."""

from __future__ import annotations

import subprocess
import sys

from gputui import __version__


def _gputui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gputui", *args], capture_output=True,
                          text=True, timeout=60, env=env, check=False)


def test_version_and_help() -> None:
    assert _gputui("--version").stdout.strip() == f"gputui {__version__}"
    helped = _gputui("--help")
    assert helped.returncode == 0
    for command in ("sim", "check", "scenarios", "--demo", "--read-only", "--prometheus-url"):
        assert command in helped.stdout


def test_scenarios_lists_each_with_one_line() -> None:
    listed = _gputui("scenarios")
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    for required in ("healthy", "node-join", "driver-crashloop", "validator-stuck",
                     "upgrade-rolling", "upgrade-failed", "mig-reconfig-failed", "xid-storm",
                     "time-slicing", "scale-5000"):
        assert required in names


def test_bad_input_is_one_line_and_exit_2() -> None:
    for args in (["--bogus"], ["check", "--speed", "fast"], ["sim", "--port", "99999"],
                 ["check", "--demo", "--scenario", "no-such-scenario"]):
        result = _gputui(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_unknown_gputui_environment_setting_is_one_line() -> None:
    import os

    env = dict(os.environ, GPUTUI_NOPE="1")
    result = _gputui("check", "--demo", env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == "gputui: environment: unknown setting 'nope'"
