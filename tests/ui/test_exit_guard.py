"""The way out: every running action stopped at once, the exit after their outcome, a signal
handled while the event loop is blocked, and no write blocking on a terminal that is gone."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from gputui.actions.base import Cancel
from gputui.ui import exit_signals
from gputui.ui.exit_signals import ExitGuard
from gputui.ui.terminal import TerminalOut


class Recorder:
    """What the guard asked of the app, in order, with the time."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.exited = threading.Event()

    def request_exit(self, code: int) -> None:
        self.calls.append(("exit", code))
        self.exited.set()

    def stop_feeds(self) -> None:
        self.calls.append(("feeds", None))

    def hangup(self) -> None:
        self.calls.append(("hangup", None))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def guard(recorder: Recorder) -> Iterator[ExitGuard]:
    made = ExitGuard(recorder.request_exit, recorder.stop_feeds, recorder.hangup)
    made.install()
    try:
        yield made
    finally:
        made.release()


def test_a_stop_request_stops_every_running_action_then_exits_after_their_outcome(
        guard: ExitGuard, recorder: Recorder) -> None:
    drains = [Cancel(), Cancel()]
    for cancel in drains:
        guard.track(cancel)
    guard.begin("SIGTERM", 143)
    assert all(cancel.wait(1.0) for cancel in drains)
    assert [cancel.reason for cancel in drains] == ["SIGTERM", "SIGTERM"]
    assert not recorder.exited.wait(0.2)  # the actions have not written their outcome yet
    for cancel in drains:
        guard.finished(cancel)
    assert recorder.exited.wait(1.0)
    assert ("exit", 143) in recorder.calls and ("feeds", None) in recorder.calls


def test_an_action_that_does_not_return_delays_the_exit_by_the_grace_only(
        guard: ExitGuard, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exit_signals, "ACTION_GRACE", 0.3)
    guard.track(Cancel())  # never finishes (a thread stuck on a silent server)
    guard.begin("quit", 0)
    assert recorder.exited.wait(5.0)
    assert recorder.calls[-1] == ("exit", 0)


def test_an_action_started_after_the_stop_request_is_stopped_at_once(
        guard: ExitGuard) -> None:
    guard.begin("SIGHUP", 129)
    late = Cancel()
    guard.track(late)
    assert late.is_set() and late.reason == "SIGHUP"


def test_sigterm_is_handled_while_the_main_thread_is_blocked(
        guard: ExitGuard, recorder: Recorder) -> None:
    """The event loop's own handlers never run while it is blocked in ``Queue.put``; this
    handler runs in the main thread between two waits on a lock."""
    drain = Cancel()
    guard.track(drain)
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    blocked = threading.Lock()
    blocked.acquire()
    assert not blocked.acquire(timeout=1.0)  # the main thread waits, as in Queue.put
    assert drain.wait(2.0) and drain.reason == "SIGTERM"
    guard.finished(drain)
    assert recorder.exited.wait(2.0)
    assert recorder.calls[-1] == ("exit", 143)


def test_the_signals_are_given_back(recorder: Recorder) -> None:
    before = signal.getsignal(signal.SIGTERM)
    made = ExitGuard(recorder.request_exit, recorder.stop_feeds, recorder.hangup)
    made.install()
    assert signal.getsignal(signal.SIGTERM) != before
    made.release()
    assert signal.getsignal(signal.SIGTERM) == before


def test_textual_writes_to_a_terminal_that_is_gone_never_block() -> None:
    """A closed terminal (here: a pipe with no reader, EPIPE) made Textual's writer thread
    die on the first write, and the 31st write block for ever; through TerminalOut the
    writer thread keeps draining and drops the output."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = TerminalOut(os.fdopen(write_end, "w"))
    writer = WriterThread(out)  # type: ignore[arg-type]
    writer.start()
    done = threading.Event()

    def write_many() -> None:
        for index in range(MAX_QUEUED_WRITES * 4):
            writer.write(f"frame {index}\n" * 100)
        done.set()

    threading.Thread(target=write_many, daemon=True).start()
    assert done.wait(10.0), "a write blocked on the dead terminal"
    writer.stop()
    assert out.gone
    started = time.monotonic()
    out.write("after")  # dropped, not attempted
    assert time.monotonic() - started < 1.0
