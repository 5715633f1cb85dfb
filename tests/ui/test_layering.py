"""The UI's side of the layering rules: no kubernetes client, no HTTP, replay stays headless."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gputui.ui


def _modules_after(code: str) -> set[str]:
    result = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                             "print(','.join(sorted(m.split('.')[0] for m in sys.modules)))"],
                            capture_output=True, text=True, check=True)
    return set(result.stdout.strip().split(","))


def test_ui_imports_no_kubernetes_or_http_client() -> None:
    loaded = _modules_after("import gputui.ui.app, gputui.ui.screens.nodes, "
                            "gputui.ui.screens.findings, gputui.ui.screens.help")
    assert not loaded & {"kubernetes", "urllib3", "requests", "aiohttp"}


def test_replay_source_is_headless() -> None:
    loaded = _modules_after("import gputui.sources.replay")
    assert not loaded & {"textual", "rich"}


# --- colour and style plumbing: one map, one palette (issue 20) ------------------------------

UI_ROOT = Path(gputui.ui.__file__).parent
RENDER = UI_ROOT / "render"
STYLE_MODULE = RENDER / "style.py"


def _ui_files() -> list[Path]:
    return sorted(UI_ROOT.rglob("*.py"))


def _imported(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every module a file imports, lazy imports inside functions included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(UI_ROOT)}:{line}"


def test_render_imports_no_textual() -> None:
    """Renderers are plain Rich: a test (or a print-out) draws them without an app."""
    loaded = _modules_after(
        "import importlib, pkgutil, gputui.ui.render as r\n"
        "for info in pkgutil.walk_packages(r.__path__, 'gputui.ui.render.'):\n"
        "    importlib.import_module(info.name)")
    assert "textual" not in loaded
    breaches = [f"{_where(path, line)} imports {module}"
                for path in sorted(RENDER.glob("*.py"))
                for line, module in _imported(ast.parse(path.read_text(encoding="utf-8")))
                if module.split(".")[0] == "textual"
                or (module.startswith("gputui.ui.") and not module.startswith("gputui.ui.render"))]
    assert breaches == []  # render/ reaches nothing above it: no theme.py <-> style.py circle


def test_bold_is_decided_only_in_render_style() -> None:
    """"Bold when critical" was decided in five places; now a role's weight lives in
    ``render/style.py`` (``BOLD_ROLES``, ``BOLD``) and nowhere passes ``bold=`` itself."""
    breaches = [_where(path, node.lineno) for path in _ui_files() if path != STYLE_MODULE
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Call) and any(k.arg == "bold" for k in node.keywords)]
    assert breaches == []


def test_colours_are_reached_through_roles_only() -> None:
    """No view names a theme variable (``"gpu-crit"``): it asks the palette for a role, so a
    state has one colour everywhere; only the theme defines the variables."""
    from gputui.ui.render.style import ROLES

    raw = re.compile("[\"']gpu-(" + "|".join(ROLES) + ")[\"']")
    breaches = [f"{path.relative_to(UI_ROOT)}: {match.group(0)}"
                for path in _ui_files() if path.name != "theme.py"
                for match in raw.finditer(path.read_text(encoding="utf-8"))]
    assert breaches == []


def test_one_palette_per_theme_built_by_the_app() -> None:
    """Widgets draw with the app's palette; none resolves the theme's variables itself."""
    makers = re.compile(r"\b(theme_palette|from_colours|Palette)\(")
    breaches = [f"{path.relative_to(UI_ROOT)}: {match.group(0)}"
                for path in _ui_files() if path.name not in ("app.py", "theme.py", "style.py")
                for match in makers.finditer(path.read_text(encoding="utf-8"))]
    assert breaches == []
    assert "theme_palette(" in (UI_ROOT / "app.py").read_text(encoding="utf-8")
