"""Every UI module keeps the project's rules: colours from the theme only, no cluster IO in the
UI, modules of a readable size, stylesheets prefixed with the screen or widget they style."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UI_MODULES = sorted((ROOT / "gputui" / "ui").rglob("*.py"))
STYLES = sorted((ROOT / "styles").glob("*.tcss"))
#: app-wide rules (header, severity classes, shared modals) live here and only here
APP_STYLESHEET = "app.tcss"


@pytest.mark.parametrize("path", UI_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_hex_colours_no_cluster_io_and_a_readable_size(path: Path) -> None:
    source = path.read_text()
    assert not re.search(r"#[0-9a-fA-F]{6}\b", source), "hex colour: use a theme variable"
    assert not re.search(r"^\s*(import|from)\s+(kubernetes|requests|urllib|aiohttp|http)\b",
                         source, re.MULTILINE), "cluster IO belongs in gputui.sources"
    assert len(source.splitlines()) <= 400, "split the module (STYLE.md: under ~400 lines)"


def _allowed_prefixes(stylesheet: Path) -> tuple[str, ...]:
    """``upgrades.tcss`` styles ``.upgrades-screen``; any sheet may style widget types."""
    return (f".{stylesheet.stem.replace('_', '-')}-screen",)


@pytest.mark.parametrize("path", [p for p in STYLES if p.name != APP_STYLESHEET],
                         ids=lambda p: p.name)
def test_stylesheets_use_theme_variables_and_prefix_their_rules(path: Path) -> None:
    """Screen CSS applies app-wide in Textual, so every rule names its screen or widget."""
    css = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.DOTALL)
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b\s*;", css), "hex colour: use a theme variable"
    for selector in re.findall(r"^([^\s{}][^{]*)\{", css, re.MULTILINE):
        for part in selector.split(","):
            part = part.strip()
            widget_type = part[:1].isupper()
            assert widget_type or part.startswith(_allowed_prefixes(path)), part


def test_the_app_stylesheet_uses_theme_variables() -> None:
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "styles" / APP_STYLESHEET).read_text(),
                 flags=re.DOTALL)
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b\s*;", css)
