"""Private Textual stays behind its one checked module (issue 28; the second, DataTable's
internals, went with the last DataTable that needed them).

Before, ``textual._types``, ``textual._two_way_dict`` and ``textual._context`` were imported
from three widget modules, and the crash report and the terminal driver reached into
private members unchecked.
"""

from __future__ import annotations

import ast
from pathlib import Path

from gputui.ui import textual_private

UI = Path(__file__).resolve().parents[2] / "gputui"
#: the module that may name private Textual (it checks what it uses)
CHECKED = {"ui/textual_private.py"}
#: private members of textual_private's list, and the one place each may appear besides it
MEMBERS = {"_exit_renderables": set(), "_close_messages_no_wait": set(), "_driver": set(),
           "_fatal_error": {"ui/crash.py"}}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(path.relative_to(UI)), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(UI.rglob("*.py"))]


def test_no_module_but_the_checked_ones_imports_private_textual() -> None:
    offenders = []
    for name, tree in _modules():
        if name in CHECKED:
            continue
        for node in ast.walk(tree):
            modules = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                       [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{name}: {m}" for m in modules
                          if m.startswith("textual.") and any(
                              part.startswith("_") for part in m.split(".")[1:])]
    assert offenders == []


def test_the_private_members_are_named_only_where_listed() -> None:
    offenders = []
    for name, tree in _modules():
        if name in CHECKED:
            continue
        for node in ast.walk(tree):
            used = (node.attr if isinstance(node, ast.Attribute) else
                    node.name if isinstance(node, ast.FunctionDef) else None)
            if used in MEMBERS and name not in MEMBERS[used]:
                offenders.append(f"{name}:{node.lineno} {used}")
    assert offenders == []


def test_the_pinned_textual_has_every_private_part_used() -> None:
    assert textual_private.PROBLEMS == ()
    assert textual_private.CRASH_HOOK and textual_private.DRIVER_FILE
