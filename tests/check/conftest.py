"""Run the real ``gputui`` CLI in a subprocess, as scripts and runbooks do."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sources.conftest import forbidden_paths  # noqa: F401 - shared 403 hook

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def gputui(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``gputui ARGS`` with a clean environment: no user config, no KUBECONFIG, no TTY."""

    def run(*args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items()
                   if k != "KUBECONFIG" and not k.startswith("GPUTUI_")}
        environ.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
                       XDG_STATE_HOME=str(tmp_path / "state"), PYTHONPATH=str(REPO))
        environ.update(env or {})
        return subprocess.run([sys.executable, "-m", "gputui", *args], capture_output=True,
                              text=True, env=environ, timeout=timeout, stdin=subprocess.DEVNULL,
                              check=False)

    return run
