"""The tests' own layering: what test modules share lives in helper modules.

A test module that imports from another test module runs that module's tests' fixtures and
imports in a place nobody looks, and a helper copied into a second test module drifts from
the first (four copies of the Pilot ``until`` had grown apart). So shared code lives in
helper modules (``tests/helpers.py``, ``tests/ui/helpers.py``, ``tests/sources/helpers.py``,
``tests/fixtures/``...), and no module under ``tests/`` imports from a ``test_*.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(TESTS.rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every module an import statement names, anywhere in the file
    (imports inside functions too); ``from tests.x import test_y`` names ``tests.x.test_y``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def test_imports_between_test_modules_are_caught() -> None:
    """The scan sees a plain import, a from-import, an import of the module itself and one
    inside a function."""
    code = ("import tests.ui.test_a\nfrom tests.ui.test_b import x\nfrom tests.ui import test_c\n"
            "def f():\n    from tests.sources.test_d import y\n")
    found = [name for _, name in _imported(ast.parse(code))
             if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]
    assert found == ["tests.ui.test_a", "tests.ui.test_b", "tests.ui.test_c",
                     "tests.sources.test_d"]


def test_no_module_under_tests_imports_a_test_module() -> None:
    bad = [f"{path.relative_to(TESTS.parent)}:{line}: {name}"
           for path, tree in _modules() for line, name in _imported(tree)
           if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]
    assert not bad, "import from tests/**/helpers.py (or another helper module) instead:\n" + \
        "\n".join(bad)


def test_the_pilot_wait_is_written_once() -> None:
    """``until`` (wait for a condition under Pilot) lives in tests/ui/helpers.py only."""
    copies = [f"{path.relative_to(TESTS.parent)}:{node.lineno}"
              for path, tree in _modules() for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
              and node.name == "until" and path != TESTS / "ui" / "helpers.py"]
    assert not copies, copies
