"""The real binary in tmux against ``gputui sim`` in its own process, stopped on purpose.

Shared by ``tests/ui/test_tmux_interrupt.py`` (a few runs) and
``benchmarks/bench_interrupt.py`` (20 runs of each way out). One run: start gputui, wait for
``● live``; for a run mid-drain, drain the cursor's node (every eviction refused, as a
disruption budget does, and answered after :data:`EVICTION_LATENCY_MS`, so the drain keeps
sending them) until the server has seen an eviction of the apply; then stop it (SIGTERM,
SIGHUP, ``tmux kill-session``, or ``ctrl+q``) and watch, from the server's side, what still
arrives. The server counts what it receives (``GET /gputui-sim/faults``: evictions by the
``evict-refuse`` fault they meet, every request by the second it came in).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import poll
from tests.ui.helpers import REPO, Tmux

EVICTION_LATENCY_MS = 300
#: every eviction refused (429) after a short wait: a drain in progress that never ends
SIM_FAULTS = f"evict-refuse,latency:{EVICTION_LATENCY_MS}~/eviction"
WAYS = ("SIGTERM", "SIGHUP", "kill-session", "ctrl+q")
EXIT_CODES = {"SIGTERM": 143, "SIGHUP": 129, "ctrl+q": 0}


#: how long a step of a run (the app coming up, a dialog opening) may take before it failed
STEP_SECONDS = 90.0


class Sim:
    """``gputui sim`` as its own process with :data:`SIM_FAULTS`; reads its counters."""

    def __init__(self, directory: Path) -> None:
        self.kubeconfig = directory / "kubeconfig"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gputui", "sim", "--port", "0", "--faults", SIM_FAULTS,
             "--kubeconfig-out", str(self.kubeconfig)], cwd=REPO, stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(REPO)})
        if not poll(self.kubeconfig.exists, timeout=60):
            self.stop()
            raise RuntimeError("gputui sim did not start")
        line = next(x for x in self.kubeconfig.read_text().splitlines() if "server:" in x)
        self.url = line.split("server:", 1)[1].strip()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/gputui-sim/faults", timeout=10) as answer:
            return dict(json.load(answer))

    def evictions(self) -> int:
        """Eviction requests received so far (dry runs included)."""
        return int(self.stats()["injected"].get("evict-refuse", 0))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie its (dead) shell left unreaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def gputui_pid(tmux: Tmux) -> int:
    shell = int(tmux.run("display", "-p", "#{pane_pid}").stdout.strip())
    children = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True, text=True,
                              check=False).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


@dataclass
class ExitRun:
    """What one stop did, as the server and the process table saw it."""

    way: str
    mid_drain: bool
    #: seconds from the stop to the process being gone
    exit_seconds: float
    #: evictions the server received more than 2 s after the stop
    late_evictions: int
    #: evictions received after the stop at all (one in flight may land)
    evictions_after: int
    #: requests the server received in whole seconds after the process was gone
    requests_after_exit: int
    #: the pane's "gputui exited with N" (None when the pane itself was killed)
    code: int | None
    #: the audit log's last record (None when there is none)
    audit: dict[str, Any] | None


def launch(tmux: Tmux, sim: Sim, audit: Path) -> None:
    command = (f"cd {REPO} && env TERM=xterm-256color PYTHONPATH={REPO} {sys.executable} -m "
               f"gputui --kubeconfig {sim.kubeconfig} --audit-log {audit}; "
               "echo \"gputui exited with $?\"; sleep 120")
    started = tmux.run("new-session", "-d", "-x", "120", "-y", "40", command)
    assert started.returncode == 0, started.stderr
    assert poll(lambda: "● live" in tmux.screen(), STEP_SECONDS), tmux.screen()


def start_drain(tmux: Tmux, sim: Sim) -> None:
    """``r``, default options and timeout, ``y`` after the dry run; returns once the server
    has received an eviction of the apply (the drain is in progress)."""
    tmux.run("send-keys", "r")
    assert poll(lambda: "Drain options" in tmux.screen(), STEP_SECONDS), tmux.screen()
    tmux.run("send-keys", "Enter")
    assert poll(lambda: "Seconds to keep retrying" in tmux.screen(), STEP_SECONDS), tmux.screen()
    tmux.run("send-keys", "Enter")
    assert poll(lambda: "Dry run: passed" in tmux.screen(), STEP_SECONDS), tmux.screen()
    before = sim.evictions()
    tmux.run("send-keys", "y")
    assert poll(lambda: sim.evictions() > before, STEP_SECONDS, step=0.1), tmux.screen()


def ask_to_quit(tmux: Tmux) -> bool:
    """``ctrl+q`` while an operation runs asks first (stop them, or stay): send it and wait
    for the question, so the stop itself is the ``y`` that answers it."""
    tmux.run("send-keys", "C-q")
    return poll(lambda: "stop and quit?" in tmux.screen(), timeout=30)


def stop(tmux: Tmux, pid: int, way: str, asked: bool = False) -> None:
    if way == "kill-session":
        tmux.run("kill-session")
    elif way == "ctrl+q":
        tmux.run("send-keys", "y" if asked else "C-q")
    else:
        os.kill(pid, getattr(signal, way))


def run_once(sim: Sim, way: str, mid_drain: bool, directory: Path) -> ExitRun:
    """One start and stop of gputui in a fresh tmux server."""
    audit = directory / f"audit-{time.monotonic_ns()}.jsonl"
    tmux = Tmux()
    try:
        launch(tmux, sim, audit)
        if mid_drain:
            start_drain(tmux, sim)
        asked = way == "ctrl+q" and mid_drain and ask_to_quit(tmux)
        pid = gputui_pid(tmux)
        at_stop = sim.evictions()
        started = time.monotonic()
        stop(tmux, pid, way, asked)
        poll(lambda: gone(pid), timeout=60, step=0.02)
        exit_seconds = time.monotonic() - started
        ended_at = float(sim.stats()["elapsed"])
        # window: what the server sees from 2 s after the stop (the bound a clean exit keeps)
        time.sleep(max(0.0, started + 2.0 - time.monotonic()))
        at_two_seconds = sim.evictions()
        time.sleep(1.5)  # window: what a leftover thread would send arrives now or never
        stats = sim.stats()
        final = int(stats["injected"].get("evict-refuse", 0))
        after_exit = sum(count for second, count in stats["per_second"].items()
                         if int(second) > ended_at)
        code = _exit_code(tmux) if way != "kill-session" else None
        return ExitRun(way, mid_drain, exit_seconds, final - at_two_seconds,
                       final - at_stop, after_exit, code, _last_record(audit))
    finally:
        tmux.run("kill-server")


def _exit_code(tmux: Tmux) -> int | None:
    poll(lambda: "gputui exited with" in tmux.screen(), timeout=30)
    for line in tmux.screen().splitlines():
        if line.startswith("gputui exited with "):
            return int(line.split()[-1])
    return None


def _last_record(audit: Path) -> dict[str, Any] | None:
    if not audit.exists():
        return None
    lines = [line for line in audit.read_text().splitlines() if line.strip()]
    return dict(json.loads(lines[-1])) if lines else None


def audit_says_interrupted(record: dict[str, Any] | None, by: str) -> bool:
    """The audit log's last line is the drain's outcome, interrupted by ``by``."""
    if record is None:
        return False
    return record.get("phase") == "outcome" and record.get("interrupted") == by
