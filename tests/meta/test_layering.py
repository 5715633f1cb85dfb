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


#: import circles allowed, each one exactly; none is left, and nothing may form a new one
ALLOWED_CIRCLES: tuple[frozenset[str], ...] = ()


def _module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (packages by __init__)."""
    modules = {}
    for path in PACKAGE_ROOT.rglob("*.py"):
        parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gputui modules ``name`` imports anywhere in its file: at module level, inside
    functions and under ``TYPE_CHECKING`` alike (``from pkg import mod`` is ``pkg.mod`` when
    that is a module, else ``pkg``; relative imports resolved)."""
    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {known(a.name) for a in node.names if a.name.startswith("gputui")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            if base == "gputui" or base.startswith("gputui."):
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else known(base)
                          for a in node.names}
    return {m for m in found if m is not None and m != name}


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = {stack.pop()}
            while module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                circles.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circle_among_gputui_modules() -> None:
    """No two gputui modules import each other, directly or round a longer loop.

    A static read of the source, so every import counts: those inside functions and under
    ``TYPE_CHECKING`` too. A lazy or type-only import that closes a circle still means
    neither module can be read, tested or moved without the other, and it becomes a real
    ``ImportError`` the day someone hoists it to the top of the file. (Executing a
    submodule runs its package's ``__init__`` first; that implicit edge is not counted, or
    every package that re-exports its children would be a circle, but an import of a name
    *defined* in a package's ``__init__`` is an edge to the package and is counted.)
    """
    modules = _module_files()
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    circles = [sorted(c) for c in _circles(graph) if c not in ALLOWED_CIRCLES]
    assert circles == []


def test_the_circle_check_finds_lazy_type_only_and_package_circles(tmp_path: Path) -> None:
    """The check above can fail: circles closed inside a function, under TYPE_CHECKING,
    round three modules, or through a name defined in a package's ``__init__``."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set()}
    assert _circles(graph) == [frozenset("abc")]
    sources = {"x.py": "def f():\n    from gputui import y\n",
               "y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from gputui.x import f\n",
               "p/__init__.py": "from gputui.p.m import THING\nVALUE = 1\n",
               "p/m.py": "from gputui.p import VALUE\nfrom . import n\nTHING = VALUE\n",
               "p/n.py": ""}
    files = {}
    for relative, text in sources.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        dotted = relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        files[f"gputui.{dotted}"] = path
    graph = {name: _edges(name, path, files) for name, path in files.items()}
    assert graph == {"gputui.x": {"gputui.y"}, "gputui.y": {"gputui.x"},
                     "gputui.p": {"gputui.p.m"}, "gputui.p.m": {"gputui.p", "gputui.p.n"},
                     "gputui.p.n": set()}
    assert sorted(sorted(c) for c in _circles(graph)) == [["gputui.p", "gputui.p.m"],
                                                           ["gputui.x", "gputui.y"]]
