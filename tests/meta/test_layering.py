"""Architecture rules that keep the layers honest (ARCHITECTURE.md, "Layers")."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import gputui

HEADLESS = ["gputui.domain", "gputui.sources", "gputui.actions", "gputui.sim",
            "gputui.settings", "gputui.cli", "gputui.check", "gputui.demo"]
PACKAGE_ROOT = Path(gputui.__file__).parent


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


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module a file imports, at any depth (lazy imports inside functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT).parts
    return parts[0] if len(parts) > 1 else path.stem


#: what each layer may not import, at module level or inside a function
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "domain": ("textual", "rich", "kubernetes", "aiohttp", "urllib3", "requests",
               "prometheus_api_client", "pynvml", "gputui.sources", "gputui.actions",
               "gputui.ui", "gputui.sim", "gputui.settings", "gputui.cli", "gputui.check"),
    # the demo is wired above sources (gputui.demo): sources never know the emulator exists
    "sources": ("textual", "rich", "gputui.ui", "gputui.actions", "gputui.sim"),
    "actions": ("textual", "rich", "gputui.ui"),
    "sim": ("textual", "rich", "gputui.ui", "gputui.sources", "gputui.actions"),
    "ui": ("kubernetes", "aiohttp", "urllib3", "requests", "prometheus_api_client",
           "pynvml"),
    "settings": ("textual", "rich"),
    "check": ("textual", "rich"),
    "demo": ("textual", "rich", "gputui.ui", "gputui.actions"),
}


def test_no_layer_imports_what_it_must_not_even_lazily() -> None:
    """A static read of every import statement, so a lazy import inside a function that the
    subprocess checks above never execute cannot slip through."""
    breaches = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        banned = FORBIDDEN.get(_layer(path), ())
        for line, module in _imports(path):
            if any(module == b or module.startswith(b + ".") for b in banned):
                breaches.append(f"{path.relative_to(PACKAGE_ROOT)}:{line} imports {module}")
    assert breaches == []
