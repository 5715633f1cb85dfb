"""Architecture rules that keep the layers honest (ARCHITECTURE.md, "Layers")."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = ["gputui.domain", "gputui.sources", "gputui.actions", "gputui.sim",
            "gputui.settings", "gputui.cli"]


@pytest.mark.parametrize("package", HEADLESS)
def test_headless_packages_do_not_load_textual(package: str) -> None:
    """Importing a headless package (and all its modules) must not import textual or rich."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"pkg = importlib.import_module({package!r})\n"
        "for info in pkgutil.walk_packages(getattr(pkg, '__path__', []), pkg.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "", f"{package} loaded {result.stdout.strip()}"


def test_domain_imports_no_io_library() -> None:
    """``gputui.domain`` is pure: no HTTP client, no kubernetes, no gputui outside itself."""
    code = (
        "import importlib, pkgutil, sys\n"
        "pkg = importlib.import_module('gputui.domain')\n"
        "for info in pkgutil.walk_packages(pkg.__path__, 'gputui.domain.'):\n"
        "    importlib.import_module(info.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes', 'aiohttp', 'urllib3', 'requests', 'prometheus_api_client') "
        "or (m.startswith('gputui.') and not m.startswith('gputui.domain')))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "", f"gputui.domain loaded {result.stdout.strip()}"
