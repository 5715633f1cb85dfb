"""Facts decided once: the upgrade states and the panes each have one home, found by its name.

``gputui/domain/upgrade_state.py`` (:class:`UpgradeState`: lane order, class, slot) and
``gputui/domain/pane.py`` (:class:`Pane`) are the only places that list their values; every
other module names a member. These tests read every module's syntax tree, so a second
map, set, lane order or pane list written as text fails here, as does a finding made without
the catalogue (which gives it its pane). ``gputui/sim`` is left out on purpose: the emulator
keeps its own copy of the operator's vocabulary so it stays an independent oracle
(``gputui/sim/operator/keys.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import gputui
from gputui.domain.pane import Pane
from gputui.domain.upgrade_state import UpgradeState

ROOT = Path(gputui.__file__).parent
HOMES = {ROOT / "domain" / "upgrade_state.py", ROOT / "domain" / "pane.py"}
#: label values that are not also ordinary words ("" is everywhere)
STATE_LABELS = frozenset(s.value for s in UpgradeState if s.value)
PANE_NAMES = frozenset(p.value for p in Pane)
#: the views and the key scopes share most names with the panes (nodes, mig, findings,
#: timeline, pipeline); a list of panes is told by the names only panes have
PANE_ONLY = frozenset({Pane.UPGRADE.value, Pane.METRICS.value, Pane.NODE.value})
#: fewer pane names than this in one collection is a coincidence of words ("nodes", "node")
PANE_LIST_MIN = 3


def _modules() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(ROOT.rglob("*.py")):
        if path in HOMES or (ROOT / "sim") in path.parents:
            continue
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))


def _strings(nodes: list[ast.expr | None]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _collections(tree: ast.AST) -> Iterator[tuple[int, set[str]]]:
    """The string constants of every literal tuple, list, set and dict's keys, and those a
    class body assigns (an enum)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            yield node.lineno, _strings(list(node.elts))
        elif isinstance(node, ast.Dict):
            yield node.lineno, _strings(list(node.keys))
        elif isinstance(node, ast.ClassDef):
            yield node.lineno, _strings([s.value for s in node.body
                                         if isinstance(s, (ast.Assign, ast.AnnAssign))])


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")


def test_no_second_list_of_upgrade_states() -> None:
    """Two state labels written side by side are a second lane order or class map."""
    found = [f"{name}:{line} {sorted(labels & STATE_LABELS)}"
             for name, tree in _modules() for line, labels in _collections(tree)
             if len(labels & STATE_LABELS) >= 2]
    assert found == []


def test_no_upgrade_state_compared_as_text() -> None:
    """``state == "upgrade-failed"`` decides a class by hand: compare with the member."""
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                texts = _strings([node.left, *node.comparators])
                if texts & STATE_LABELS:
                    found.append(f"{name}:{node.lineno} {sorted(texts & STATE_LABELS)}")
    assert found == []


def test_no_second_pane_vocabulary() -> None:
    found = [f"{name}:{line} {sorted(names & PANE_NAMES)}"
             for name, tree in _modules() for line, names in _collections(tree)
             if len(names & PANE_NAMES) >= PANE_LIST_MIN and names & PANE_ONLY]
    assert found == []


def test_jumps_name_a_pane_member() -> None:
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) in ("JumpRequested", "jump_to"):
                if _strings([*node.args, *(k.value for k in node.keywords)]) & PANE_NAMES:
                    found.append(f"{name}:{node.lineno}")
    assert found == []


def test_findings_are_made_by_the_catalogue_only() -> None:
    """``catalogue.finding`` fills in the pane and the usual severity: a ``Finding(...)``
    elsewhere would repeat them by hand."""
    found = [f"{name}:{node.lineno}" for name, tree in _modules()
             if name != "domain/catalogue.py" for node in ast.walk(tree)
             if isinstance(node, ast.Call) and _call_name(node) == "Finding"]
    assert found == []


def test_the_scan_sees_what_it_must_refuse() -> None:
    """The checks above would catch the shapes they are about."""
    tree = ast.parse('LANES = ("upgrade-required", "cordon-required")\n'
                     'IDLE = {"upgrade-done": 1, "upgrade-required": 2}\n'
                     'PANES = ("nodes", "pipeline", "metrics")\n'
                     'class Where(StrEnum):\n    NODES = "nodes"\n    MIG = "mig"\n'
                     '    UPGRADE = "upgrade"\n')
    found = [(len(names & STATE_LABELS), len(names & PANE_NAMES), bool(names & PANE_ONLY))
             for _, names in _collections(tree)]
    assert sorted(found) == [(0, 3, True), (0, 3, True), (2, 0, False), (2, 0, False)]
