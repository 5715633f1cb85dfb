"""The UI tests wait on conditions, not on the clock (issue 28).

A fixed ``await pilot.pause(0.2)`` before an assertion is a guess at how long the app takes:
it passes on a quiet machine and fails under load, and where it is long enough it wastes the
difference in every run. So a UI test waits for what its next assertion needs
(``until(pilot, check)`` in ``tests/ui/helpers.py``, ``poll`` in ``tests/helpers.py``), and
the few waits that are windows (nothing may happen within 1.5 s, a debounce, N refresh
periods) go through ``quiet_for`` or say so on their line: ``# window: <why>``.

This scan holds the rule: in ``tests/ui`` (outside the helper modules that implement the
waits), a ``.pause(...)`` with an argument, or an ``asyncio.sleep``/``time.sleep``, fails
unless its line carries that marker. ``pilot.pause()`` with no argument waits for the app's
queue to drain, a condition, and stays free.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
UI = TESTS / "ui"
#: the modules that implement the waits (and the tmux ones, whose subprocesses are polled)
HELPERS = {UI / "helpers.py", UI / "tmux_exit.py", UI / "tmux_journey.py"}
MARKER = re.compile(r"#\s*window:\s*\S")
#: modules whose ``sleep`` is a wait on the clock
SLEEPERS = {"asyncio", "time"}


def _is_fixed_wait(call: ast.Call) -> bool:
    """``x.pause(<anything>)``, ``asyncio.sleep(...)``, ``time.sleep(...)``, ``sleep(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "pause":
        return bool(call.args or call.keywords)
    if isinstance(func, ast.Attribute) and func.attr == "sleep":
        return isinstance(func.value, ast.Name) and func.value.id in SLEEPERS
    return isinstance(func, ast.Name) and func.id == "sleep"


def fixed_waits(source: str) -> list[int]:
    """The lines of the unmarked fixed waits in ``source``, in order; a call spread over
    several lines is marked by a ``# window:`` comment on any of them."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _is_fixed_wait(node):
            span = lines[node.lineno - 1:(node.end_lineno or node.lineno)]
            if not any(MARKER.search(line) for line in span):
                found.append(node.lineno)
    return sorted(found)


def test_the_scan_finds_each_kind_of_fixed_wait_and_spares_the_marked_ones() -> None:
    code = ("async def t(pilot):\n"
            "    await pilot.pause(0.2)\n"                       # 2
            "    await pilot.pause(delay=1)\n"                   # 3
            "    await asyncio.sleep(0)\n"                       # 4
            "    time.sleep(0.5)\n"                              # 5
            "    sleep(1)\n"                                     # 6
            "    await pilot.pause()\n"                          # drains the queue: free
            "    await pilot.pause(0.3)  # window: no request may follow\n"
            "    await pilot.pause(  # window: three refresh periods\n"
            "        1.5)\n"
            "    await pilot.pause(0.1)  # window:\n"            # 11: a marker says why
            "    release.wait(20)\n"                             # a wait on an event: free
            "    await until(pilot, lambda: done)\n")
    assert fixed_waits(code) == [2, 3, 4, 5, 6, 11]


def test_no_ui_test_waits_a_fixed_time_without_saying_why() -> None:
    found = [f"{path.relative_to(TESTS.parent)}:{line}"
             for path in sorted(UI.rglob("*.py")) if path not in HELPERS
             for line in fixed_waits(path.read_text(encoding="utf-8"))]
    assert not found, (
        "wait on what the next assertion needs (tests/ui/helpers.py: until, quiet_for for a "
        "window where nothing may happen), or mark a real window '# window: <why>':\n"
        + "\n".join(found))
