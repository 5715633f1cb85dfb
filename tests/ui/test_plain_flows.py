"""The flows that are plain objects, tested without an App (issue 28): each receives what it
needs in its constructor, so a fake host is enough."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.domain.timeline_event import Timeline
from gputui.session import Session
from gputui.settings import Settings
from gputui.ui.contracts import PodLogLoaded
from gputui.ui.pod_logs import PodLogs
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.snapshot_pace import SnapshotPace
from gputui.ui.summary_flow import SummaryFlow
from gputui.ui.timeline_flow import TimelineFlow
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording


class Timers:
    """A fake ``set_timer``: the test fires what is due."""

    def __init__(self) -> None:
        self.due: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, wait: float, then: Callable[[], None]) -> object:
        self.due.append((wait, then))
        return object()

    def fire(self) -> None:
        due, self.due = self.due, []
        for _, then in due:
            then()


def _snapshot(at: float) -> ClusterSnapshot:
    from dataclasses import replace

    return replace(EMPTY_SNAPSHOT, generated_at=at)


def test_the_pace_applies_at_once_then_only_the_newest_after_the_interval() -> None:
    now = [100.0]
    applied: list[float] = []
    timers = Timers()
    pace = SnapshotPace(lambda s: applied.append(s.generated_at), timers, interval=0.25,
                        monotonic=lambda: now[0])
    pace.offer(_snapshot(1))
    assert applied == [1]  # the first one at once
    pace.offer(_snapshot(2))
    pace.offer(_snapshot(3))  # replaces 2 while it waits
    assert applied == [1] and [wait for wait, _ in timers.due] == [0.25]
    now[0] += 0.25
    timers.fire()
    assert applied == [1, 3] and pace.applied == 2
    pace.offer(_snapshot(4))
    pace.forget()  # a context switch: the old cluster's snapshot is never applied
    timers.fire()
    assert applied == [1, 3]


class SummaryHost:
    """What the summary flow reads of the app, and what it did."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.snapshot = EMPTY_SNAPSHOT
        self.clock = lambda: 1_000.0
        self.keymap: dict[str, str] = {}
        self.session_started = 900.0
        self.pushed: list[Any] = []
        self.copied: list[str] = []
        self.said: list[str] = []

    def push_screen(self, screen: Any, callback: Any = None) -> None:
        self.pushed.append(screen)

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)

    def notify(self, message: str, **_kw: Any) -> None:
        self.said.append(message)


def test_the_summary_opens_for_review_then_goes_by_osc52_or_to_a_private_file(
        tmp_path: Path) -> None:
    host = SummaryHost(Settings(audit_log=str(tmp_path / "audit.jsonl")))
    flow = SummaryFlow(host, Timeline())
    flow.open()
    assert len(host.pushed) == 1 and type(host.pushed[0]).__name__ == "SummaryScreen"
    flow.copy("# handoff\n")
    assert host.copied == ["# handoff\n"] and "OSC 52" in host.said[-1]
    host.settings = Settings(audit_log=str(tmp_path / "audit.jsonl"), clipboard="file")
    flow.copy("# handoff\n", wall=1_796_117_400.0)
    (written,) = tmp_path.glob("summary-*.md")
    assert written.read_text() == "# handoff\n" and written.stat().st_mode & 0o077 == 0
    assert str(written) in host.said[-1] and host.copied == ["# handoff\n"]


class PodLogHost:
    """What the pod log view uses of the app; workers run at once."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.screen: Any = object()
        self.pushed: list[Any] = []

    def push_screen(self, screen: Any, callback: Any = None) -> None:
        self.pushed.append(screen)
        self.screen = screen

    def run_worker(self, work: Callable[[], None], **_kw: Any) -> None:
        work()


def test_the_pod_log_is_read_from_the_shown_session_and_a_failure_is_shown(
        monkeypatch: Any) -> None:
    source = ReplaySource.from_recording(load_recording("driver-crashloop", SCENARIOS))
    host = PodLogHost(Session(source))
    posted: list[Any] = []
    monkeypatch.setattr(PodLogScreen, "post_message", lambda self, m: posted.append(m))
    logs = PodLogs(host)
    logs.open("gpu-operator", "nvidia-driver-daemonset-x", None)
    (screen,) = host.pushed
    assert isinstance(screen, PodLogScreen) and source.reads == [
        ("gpu-operator", "nvidia-driver-daemonset-x", None)]
    assert isinstance(posted[0], PodLogLoaded) and not posted[0].log.error
    logs.failed("reading the pod log failed: ConnectionError")
    assert posted[-1].log.error == "reading the pod log failed: ConnectionError"
    assert posted[-1].log.pod == "nvidia-driver-daemonset-x"


class TimelineHost:
    """What the timeline uses of the app; the audit read is run at once."""

    def __init__(self, audit_log: str) -> None:
        self.settings = Settings(audit_log=audit_log)
        self.clock = lambda: 0.0
        self.screen: Any = object()
        self.screen_stack: list[Any] = []
        self.said: list[str] = []

    def notify(self, message: str, **_kw: Any) -> None:
        self.said.append(message)

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any:
        return callback(*args)

    def run_worker(self, work: Callable[[], None], **_kw: Any) -> None:
        work()


def test_the_timeline_derives_from_snapshots_until_a_replay_gives_it(tmp_path: Path) -> None:
    from tests.ui.conftest import modified

    recording = load_recording("driver-crashloop", SCENARIOS)
    first = modified(recording)
    node = sorted(first.nodes)[0]
    host = TimelineHost(str(tmp_path / "audit.jsonl"))
    flow = TimelineFlow(host)
    batches: list[list[str]] = []
    flow.sink = lambda events: batches.append([e.kind for e in events])
    flow.snapshot(first)  # the baseline
    assert len(flow.timeline) == 0
    flow.snapshot(modified(recording, cordon=(node,)))
    assert [e.node for e in flow.timeline.events()] == [node] and batches == [["cordon"]]
    flow.given([])
    flow.snapshot(modified(recording, cordon=(node, sorted(first.nodes)[1])))
    assert len(flow.timeline) == 0 and batches == [["cordon"]]  # nothing derived any more
