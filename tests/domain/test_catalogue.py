"""One catalogue of finding codes (``gputui/domain/catalogue.py``): README, rules, contract.

The rules may only name codes through the catalogue's constants: this test reads the rule
modules' compiled code (their constants and the names they load), not their text.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from gputui.domain import (
    catalogue,
    findings,
    findings_cluster,
    findings_health,
    findings_metrics,
    findings_mig,
    findings_pipeline,
    findings_upgrade,
    gpu_count,
    join_pools,
    sharing,
)
from gputui.domain import findings_healthchecks, operands_absent, upgrade_blocked
from gputui.domain.catalogue import CATALOGUE
from gputui.domain.model import Finding, Severity
from gputui.domain.pane import Pane

RULE_MODULES = (findings, findings_cluster, findings_metrics, findings_mig, findings_pipeline,
                findings_upgrade, sharing, join_pools, findings_health, gpu_count)
RULE_MODULES += (upgrade_blocked, operands_absent, findings_healthchecks)
README = Path(__file__).resolve().parents[2] / "README.md"


def _code_objects(module: types.ModuleType) -> Iterator[types.CodeType]:
    """Every code object compiled from the module's source (functions, nested, lambdas)."""
    top = compile(Path(str(module.__file__)).read_text(), str(module.__file__), "exec")
    todo = [top]
    while todo:
        code = todo.pop()
        yield code
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


def _readme_codes() -> list[str]:
    """The backticked codes of the paragraph after the Findings section's "Codes:",
    explanations in () dropped."""
    text = README.read_text()
    start = text.index("Codes:\n\n", text.index("## Findings")) + len("Codes:\n\n")
    paragraph = text[start:text.index("\n\n", start)]
    depth, kept = 0, []
    for char in paragraph:
        depth += char == "("
        if depth == 0:
            kept.append(char)
        depth -= char == ")"
    return re.findall(r"`([a-z]+(?:-[a-z]+)+)`", "".join(kept))


def test_the_readme_lists_the_catalogue_in_order() -> None:
    assert _readme_codes() == list(CATALOGUE)


def test_rules_name_codes_only_through_the_catalogue_and_use_all_of_it() -> None:
    constants = {name: value for name, value in vars(catalogue).items()
                 if name.isupper() and isinstance(value, str) and value in CATALOGUE}
    assert set(constants.values()) == set(CATALOGUE)
    literals: set[str] = set()
    loaded: set[str] = set()
    for module in RULE_MODULES:
        for code in _code_objects(module):
            literals |= {c for c in code.co_consts if isinstance(c, str) and c in CATALOGUE}
            loaded |= set(code.co_names)
    assert literals == set()
    used = {value for name, value in constants.items() if name in loaded}
    assert used == set(CATALOGUE)


def test_each_entry_is_complete() -> None:
    for code, entry in CATALOGUE.items():
        assert entry.code == code and re.fullmatch(r"[a-z]+(-[a-z]+)+", code)
        assert entry.severity in (Severity.WARNING, Severity.CRITICAL)
        assert isinstance(entry.pane, Pane) and entry.meaning and "\n" not in entry.meaning


def test_panes_are_what_the_ui_jumps_to() -> None:
    """Every pane (the catalogue's, ``Finding.pane``'s default) is one the UI routes."""
    from gputui.ui.screens.base import PANE_TARGETS
    assert set(PANE_TARGETS) == set(Pane)
    assert {entry.pane for entry in CATALOGUE.values()} <= set(Pane)
    assert Finding("x", Severity.INFO, None, "", "").pane is Pane.NODES


def test_a_finding_takes_its_pane_and_usual_severity_from_the_catalogue() -> None:
    for code, entry in CATALOGUE.items():
        made = catalogue.finding(code, "gpu-1", "message", "hint", "gpu0")
        assert (made.pane, made.severity, made.subject) == (entry.pane, entry.severity, "gpu0")
    told = catalogue.finding(catalogue.XID_ERROR, None, "m", "h", severity=Severity.INFO)
    assert told.severity is Severity.INFO and told.pane is Pane.METRICS


def test_a_code_outside_the_catalogue_cannot_be_made() -> None:
    with pytest.raises(KeyError):
        catalogue.finding("made-up-code", None, "m", "h")
