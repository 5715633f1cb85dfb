"""Stopping the real binary mid-drain and killing its terminal: it stops sending and leaves.

gputui in tmux against ``gputui sim`` in its own process (every eviction refused, so a drain
keeps evicting until stopped). SIGTERM, SIGHUP and ``ctrl+q`` (the progress dialog open; its
question, stop and quit, answered ``y``) mid-drain: no eviction reaches the server more than 2 s after, the process is gone within
5 s, and the audit log says the drain was interrupted. ``tmux kill-session`` (an SSH drop),
idle and mid-drain, twice each: gone within 5 s, no request after.
``benchmarks/bench_interrupt.py`` runs each way 20 times and prints the spread.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.tmux_exit import EXIT_CODES, Sim, audit_says_interrupted, run_once

pytestmark = pytest.mark.tmux


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    server = Sim(tmp_path_factory.mktemp("sim"))
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("way", ["SIGTERM", "SIGHUP", "ctrl+q"])
def test_a_stop_mid_drain_ends_the_evictions_and_the_process(sim: Sim, tmp_path: Path,
                                                              way: str) -> None:
    run = run_once(sim, way, mid_drain=True, directory=tmp_path)
    assert run.exit_seconds < 5.0, run
    assert run.late_evictions == 0, run
    assert run.evictions_after <= 1, run  # at most the one in flight
    assert run.code == EXIT_CODES[way], run
    assert audit_says_interrupted(run.audit, "quit" if way == "ctrl+q" else way), run
    assert run.requests_after_exit == 0, run


@pytest.mark.parametrize("mid_drain", [False, True], ids=["idle", "mid-drain"])
@pytest.mark.parametrize("repeat", range(2))
def test_the_terminal_killed_under_gputui_ends_it(sim: Sim, tmp_path: Path, mid_drain: bool,
                                                  repeat: int) -> None:
    run = run_once(sim, "kill-session", mid_drain=mid_drain, directory=tmp_path)
    assert run.exit_seconds < 5.0, run
    assert run.requests_after_exit == 0, run
    assert run.late_evictions == 0, run
    if mid_drain:
        assert audit_says_interrupted(run.audit, "SIGHUP"), run
