"""One owner of how the process ends (issue 28): clean-ups, signal handlers, the fast exit.

Before, SIGTERM/SIGHUP handlers were installed in three modules, each saving the others',
and the TUI's fast exit called the interpreter's private ``atexit._run_exitfuncs``.
"""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
from pathlib import Path

from gputui import shutdown

ROOT = Path(__file__).resolve().parents[2] / "gputui"
OWNER = ROOT / "shutdown.py"


def _calls(tree: ast.AST) -> list[str]:
    """Dotted names of every attribute used (``signal.signal``, ``atexit.register``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_only_the_owner_installs_signal_handlers_or_touches_atexit() -> None:
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path == OWNER:
            continue
        tree = ast.parse(path.read_text())
        for name in _calls(tree):
            if name == "signal.signal" or name.startswith("atexit."):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_cleanups_run_once_last_first_and_a_failing_one_does_not_stop_the_rest() -> None:
    ran: list[str] = []

    def broken() -> None:
        ran.append("broken")
        raise RuntimeError("disk gone")

    shutdown.on_exit(lambda: ran.append("first"))
    shutdown.on_exit(broken)
    shutdown.on_exit(lambda: ran.append("last"))
    shutdown.run_cleanups()
    shutdown.run_cleanups()  # nothing left to run
    assert ran == ["last", "broken", "first"]


def test_handlers_are_given_back() -> None:
    before = signal.getsignal(signal.SIGUSR1)
    restore = shutdown.handle_signals(lambda sig: None, [signal.SIGUSR1])
    assert signal.getsignal(signal.SIGUSR1) is not before
    restore()
    assert signal.getsignal(signal.SIGUSR1) is before


def test_a_signal_runs_the_cleanups_then_ends_the_process_by_that_signal(
        tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    script = (
        "import os, signal, time\n"
        "from gputui import shutdown\n"
        f"shutdown.on_exit(lambda: open({str(marker)!r}, 'w').close())\n"
        "shutdown.handle_signals(shutdown.die_by_signal, [signal.SIGTERM])\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(10)\n")
    done = subprocess.run([sys.executable, "-c", script], timeout=60, check=False,
                          cwd=ROOT.parent)
    assert done.returncode == -signal.SIGTERM
    assert marker.exists()


def test_the_fast_exit_runs_the_cleanups_and_keeps_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    script = (
        "from gputui import shutdown\n"
        f"shutdown.on_exit(lambda: open({str(marker)!r}, 'w').close())\n"
        "shutdown.end_process(3)\n")
    done = subprocess.run([sys.executable, "-c", script], timeout=60, check=False,
                          cwd=ROOT.parent)
    assert done.returncode == 3 and marker.exists()
