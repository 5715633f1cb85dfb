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


def test_replay_sources_are_headless() -> None:
    loaded = _modules_after("import gputui.sources.tape.source, tests.fixtures.recordings")
    assert not loaded & {"textual", "rich"}


# --------------------------------------------------------------------- the view contract
UI = Path(__file__).resolve().parents[2] / "gputui" / "ui"

#: (module, first argument) -> why a getattr/hasattr is right there. Screens and panes are
#: fed through the typed protocols of ``gputui.ui.contracts``, never looked up by name: a
#: misspelt name there is a view skipped without a sound (issue 20).
ATTRIBUTE_LOOKUPS: dict[tuple[str, str], str] = {
    ("terminal.py", "self._file"): "TerminalOut proxies a file object (__getattr__)",
    ("textual_private.py", "App"): "checks that Textual's private App members it relies on "
                                    "still exist",
    ("textual_private.py", "app"): "reads the checked private App members by name",
    ("contract_check.py", "have"): "the contract check reads abc's marker off a function",
}

#: widget -> the one screen module that composes it: the only other module that may name
#: the messages nested in the widget class (a widget telling its own screen)
WIDGET_MESSAGES: dict[str, tuple[str, str]] = {
    "NodeTable.NodeSelected": ("widgets/node_table.py", "screens/nodes.py"),
    "NodeTable.ViewChanged": ("widgets/node_table.py", "screens/nodes.py"),
    "UpgradeLanes.NodeHighlighted": ("widgets/upgrade_lanes.py", "screens/upgrades.py"),
    "LineTable.RowChosen": ("widgets/line_table.py", "screens/nodes.py",
                            "widgets/upgrade_lanes.py", "screens/findings.py",
                            "screens/joins.py"),
    "LineTable.CursorMoved": ("widgets/line_table.py", "screens/findings.py",
                              "screens/joins.py", "screens/timeline.py"),
}


def _ui_modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(UI.rglob("*.py")):
        yield str(path.relative_to(UI)), ast.parse(path.read_text(encoding="utf-8"))


def _attribute_lookups() -> Iterator[tuple[str, str, int]]:
    for name, tree in _ui_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and node.args:
                yield name, ast.unparse(node.args[0]), node.lineno


def test_no_getattr_or_hasattr_in_the_ui_outside_the_allow_list() -> None:
    """Views are fed through the contract (``isinstance`` on a protocol), not by name."""
    found = {(name, target): line for name, target, line in _attribute_lookups()}
    unlisted = [f"{name}:{line} getattr/hasattr on {target}"
                for (name, target), line in found.items()
                if (name, target) not in ATTRIBUTE_LOOKUPS]
    assert unlisted == []
    assert set(ATTRIBUTE_LOOKUPS) <= set(found), "allow-list entries no longer needed"


def _message_classes() -> Iterator[tuple[str, str, ast.ClassDef]]:
    """(module, qualified name, class) of every class deriving from Textual's Message."""
    def walk(body: list[ast.stmt], prefix: str, module: str) -> Iterator[
            tuple[str, str, ast.ClassDef]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                qualname = f"{prefix}{node.name}"
                if any(ast.unparse(base).split(".")[-1] == "Message" for base in node.bases):
                    yield module, qualname, node
                yield from walk(node.body, f"{qualname}.", module)

    for name, tree in _ui_modules():
        yield from walk(tree.body, "", name)


def test_every_message_crossing_screens_or_layers_lives_in_contracts() -> None:
    """A message defined elsewhere is nested in a widget and named only by the screen that
    composes it; everything else (worker -> screen, screen -> app) is in contracts.py."""
    misplaced = [f"{module}: {qualname}" for module, qualname, _ in _message_classes()
                 if module != "contracts.py" and qualname not in WIDGET_MESSAGES]
    assert misplaced == []
    for qualname, allowed in WIDGET_MESSAGES.items():
        naming = {name for name, tree in _ui_modules() if _names_message(tree, qualname)}
        assert naming <= set(allowed), f"{qualname} is named outside {allowed}: {naming}"


def _names_message(tree: ast.Module, qualname: str) -> bool:
    """Whether a module refers to a nested message: ``Widget.Inner`` or its handler name."""
    inner = qualname.rsplit(".", 1)[-1]
    handler = "_" + "".join(f"_{c.lower()}" if c.isupper() else c for c in inner).lstrip("_")
    return any(isinstance(node, ast.Attribute) and node.attr == inner
               or isinstance(node, ast.FunctionDef) and node.name.endswith(handler)
               for node in ast.walk(tree))


def test_contract_messages_are_dataclasses_with_typed_payloads() -> None:
    """Each message in contracts.py is a dataclass whose fields all carry a type, and the
    module names no ``Any`` (mypy's ``disallow_any_explicit`` holds it there too)."""
    tree = ast.parse((UI / "contracts.py").read_text(encoding="utf-8"))
    assert not [n.lineno for n in ast.walk(tree)
                if isinstance(n, ast.Name) and n.id == "Any"
                or isinstance(n, ast.alias) and n.name == "Any"]
    messages = [node for module, _, node in _message_classes() if module == "contracts.py"]
    assert len(messages) >= 10
    for node in messages:
        decorators = [ast.unparse(d) for d in node.decorator_list]
        # identity, as Textual's messages; no repr: TEXTUAL_LOG would get the snapshot
        assert decorators == ["dataclass(eq=False, repr=False)"], node.name
        assigned = [n for n in node.body if isinstance(n, ast.Assign)]
        assert assigned == [], f"{node.name} has an untyped field"
        assert any(isinstance(n, ast.AnnAssign) for n in node.body), \
            f"{node.name} carries no payload"
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
