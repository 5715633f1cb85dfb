"""Shared fixtures: paths to real tools and emulated clusters on loopback ports.

Area-specific fixtures live next to their tests (``tests/<area>/conftest.py``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster

REPO = Path(__file__).resolve().parent.parent


def _tool(env: str, local: Path, name: str) -> str:
    """A real tool's path; fail (not skip) when missing so CI can never pass without it."""
    candidate = os.environ.get(env) or (str(local) if local.exists() else shutil.which(name))
    if not candidate or not Path(candidate).exists():
        pytest.fail(f"{name} not found: run ./scripts/test.sh, which installs it")
    return candidate


@pytest.fixture(scope="session")
def kubectl_bin() -> str:
    """Debian's kubectl 1.20 extracted by scripts/test.sh (not the image's own kubectl)."""
    return _tool("KUBECTL_FOR_TESTS", REPO / ".tools/kubectl/usr/bin/kubectl", "kubectl")


@pytest.fixture
def api_only() -> Iterator[EmulatedCluster]:
    """The emulated API server over an empty store, no controllers (API-level tests)."""
    cluster = EmulatedCluster(run_controllers=False)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
