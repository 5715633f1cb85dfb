"""A session: the one cluster (or recording) the TUI shows, and what it may do with it.

Why a plain object opened before the app: which source to open (a kubeconfig context, the
emulated cluster, a recording), whether actions are allowed, what is recorded and whether
``:ctx`` can switch were decided in four places (the TUI's runner, the replay's, the context
switch and the app itself), and the app was changed after its factory returned. Now
:func:`open_session` decides all of it once, headless (no Textual here), and the app is
built from the settings and a session by :func:`gputui.ui.app.make_app`, its only factory. A
replay is a session without a runner and with a cursor, not an app of its own; ``:ctx``
asks the session's opener for a new session and the app swaps it in one place.

What a session may do follows from what it holds:

* act: it has a :attr:`runner` (a writer to its cluster and the audit log);
* record: it has a :attr:`recorder` (``--record``) tapped into its source and feed;
* switch context: it has an :attr:`opener` (a kubeconfig, not a demo or a recording);
* travel in time: it has a :attr:`replay` (a recording's source, with its cursor).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from gputui.settings import Settings
from gputui.sources.base import ClusterSource
from gputui.sources.contexts import (
    close_writer,
    is_read_only,
    read_only_reason,
    source_context,
)
from gputui.sources.foreground import Foreground

if TYPE_CHECKING:  # opened lazily: the HTTP client, the emulator and the actions (which
    # ``check``, reading once, never uses) load only when used
    from pathlib import Path

    from gputui.actions.base import ClusterWriter
    from gputui.actions.runner import Runner

    from gputui.domain.model import ClusterSnapshot
    from gputui.domain.replay_cursor import ReplayCursor
    from gputui.sources.metrics import MetricsFeed
    from gputui.sources.relay import Relay
    from gputui.sources.tape.source import TapeSource
    from gputui.sources.tape.writer import TapeWriter

#: what :func:`open_session` opens: a kubeconfig's cluster, the emulated one, a recording
SessionKind = Literal["live", "demo", "replay"]
#: why ``:ctx`` does nothing in a session without a kubeconfig (demo)
NO_KUBECONFIG = "this session has no kubeconfig contexts to switch between"
#: why ``:ctx`` does nothing in a replay
NO_CONTEXTS = "a replay shows one recording; there is no cluster to switch to"


@dataclass(eq=False)
class Session:
    """One cluster or recording, shown by one app at a time (see the module docstring)."""

    source: ClusterSource
    #: "now" for every age shown: the emulated clock in a demo, the cursor in a replay
    clock: Callable[[], float] = time.time
    metrics: MetricsFeed | None = None
    #: carries out actions; None: every action is greyed (a replay, a source without a
    #: cluster to write to)
    runner: Runner | None = None
    #: ``--record``: the tape this session's builds and metrics are written to
    recorder: TapeWriter | None = None
    #: a recording's source (its cursor moves in time); None for a live cluster
    replay: TapeSource | None = None
    #: opens another context of the same kubeconfig as a new session (``:ctx``)
    opener: Callable[[str], Session] | None = None
    #: the kubeconfig context shown (exactly as the kubeconfig spells it); "" without one
    context: str = ""
    #: the API server, for the header until the source reports
    server: str = ""
    #: writers this session opened and must close (its runner's, a read-only stand-in)
    _writers: list[ClusterWriter] = field(default_factory=list)
    #: the source's callbacks when it was started early (:meth:`start_early`)
    _relay: Relay | None = None
    #: the screen's claims for a source that heeds none (a recording, a test's stand-in)
    _unheeded: Foreground = field(default_factory=Foreground)

    @property
    def can_act(self) -> bool:
        return self.runner is not None

    @property
    def can_record(self) -> bool:
        return self.recorder is not None

    @property
    def can_switch(self) -> bool:
        return self.opener is not None

    @property
    def cursor(self) -> ReplayCursor | None:
        """The replay's cursor (travel in time); None for a live cluster."""
        return self.replay.cursor if self.replay is not None else None

    @property
    def why_no_switch(self) -> str:
        """Why ``:ctx`` cannot switch, in the words the notification shows."""
        return NO_CONTEXTS if self.replay is not None else NO_KUBECONFIG

    @property
    def foreground(self) -> Foreground:
        """What the screen needs now, heeded by the source's threads (a live cluster's)."""
        heeded = getattr(self.source, "foreground", None)
        return heeded if isinstance(heeded, Foreground) else self._unheeded

    def start_early(self) -> None:
        """Start the source before the app exists (:mod:`gputui.sources.relay`): its lists
        transfer while the UI is imported and built; :meth:`start` hands over what it
        said meanwhile."""
        if self._relay is None:
            from gputui.sources.relay import Relay

            self._relay = Relay()
            self.foreground.expect_screen()  # the app follows: no snapshot built for nobody
            self.source.start(self._relay.snapshot, self._relay.status)

    def start(self, on_snapshot: Callable[..., None], on_status: Callable[..., None],
              on_metrics: Callable[..., None]) -> None:
        """Start the source (or attach to its early start) and the metrics feed (the
        app's callbacks post messages)."""
        if self._relay is not None:
            self._relay.attach(on_snapshot, on_status)
        else:
            self.foreground.expect_screen()
            self.source.start(on_snapshot, on_status)
        self.foreground.listening()
        if self.metrics is not None:
            self.metrics.start(on_metrics)

    def stop(self) -> None:
        """Stop the source and the metrics feed: no request is sent after this."""
        self.foreground.release()
        self.source.stop()
        if self.metrics is not None:
            self.metrics.stop()

    def close_writers(self) -> None:
        """Drop the writers' pooled connections (closing twice is harmless)."""
        writers, self._writers = self._writers, []
        for writer in writers:
            close_writer(writer)


def session_of(settings: Settings, source: ClusterSource, *,
               clock: Callable[[], float] | None = None,
               writer: ClusterWriter | None = None, metrics: MetricsFeed | None = None,
               recorder: TapeWriter | None = None,
               opener: Callable[[str], Session] | None = None) -> Session:
    """A session of parts already opened (tests, benchmarks and :func:`open_session`).

    The runner is built here, once: a context matching ``read_only_contexts`` gets a
    read-only writer whatever it was given (fail closed: ``--context prod-1`` is as
    read-only as a switch to it). A live source's kubeconfig gives the ``:ctx`` opener
    unless one is passed; a demo never switches.
    """
    context = source_context(source) or ""
    target = getattr(source, "target", None)
    server = str(getattr(target, "server", "") or "")
    session = Session(source, clock or _source_clock(source), metrics, recorder=recorder,
                      context=context, server=server)
    read_only = is_read_only(settings, context) if context else settings.read_only
    if writer is not None and read_only and not writer.read_only:
        from gputui.sources.writer import writer_for_source

        writer = writer_for_source(source, read_only=True)
    if writer is not None:
        session._writers.append(writer)
        from gputui.actions.audit import AuditLog
        from gputui.actions.runner import Runner

        session.runner = Runner(writer, AuditLog(settings.audit_log),
                                read_only_reason=read_only_reason(settings, context))
    if opener is None and context and not settings.demo:
        opener = kube_opener(settings)
    session.opener = opener
    return session


def session_kind(settings: Settings, recording: object | None = None) -> SessionKind:
    """What the command line asks to be shown, decided here for the TUI and ``check``
    alike: a recording given (``gputui replay FILE``, ``check --replay``) is a replay,
    ``--demo`` the emulated cluster, anything else the kubeconfig's cluster."""
    if recording is not None:
        return "replay"
    return "demo" if settings.demo else "live"


def read_once(settings: Settings, notes: list[str]) -> ClusterSnapshot:
    """``gputui check``: one complete snapshot of the live or demo cluster a session of
    :func:`session_kind` would show, read by one-shot readers (no watch, no feed, no
    writer: a check reads once and never acts). ``notes``: what could not be read, said
    under the report. The demo's module (and the emulator) is imported only for a demo."""
    if session_kind(settings) == "demo":
        from gputui.demo import read_demo_snapshot

        return read_demo_snapshot(settings, notes)
    from gputui.sources.connect import read_snapshot

    return read_snapshot(settings, notes)


def open_session(settings: Settings, kind: SessionKind, recording: Path | None = None
                 ) -> Session:
    """The session ``gputui`` (``live``), ``gputui --demo`` or ``gputui replay FILE``
    (``replay``, ``recording`` given) shows.

    Raises:
        SourceError: the kubeconfig, the scenario or the recording cannot be opened, or
            ``--record`` cannot create its file (one line; the TUI does not start).
    """
    if kind == "replay":
        if recording is None:
            raise ValueError("a replay session needs its recording")
        return _open_replay(settings, recording)
    from gputui.sources.connect import open_metrics, open_source

    if kind == "demo":  # the emulator is wired here, above sources (gputui.demo)
        from gputui.demo import open_demo_source

        source = open_demo_source(settings)
    else:
        source = open_source(settings)
    try:
        metrics = open_metrics(settings, source)
        from gputui.sources.tape.recorder import open_recorder

        recorder = open_recorder(settings, source, metrics)
    except Exception:
        source.stop()
        raise
    return session_of(settings, source, writer=_writer(settings, source), metrics=metrics,
                      recorder=recorder)


def kube_opener(settings: Settings) -> Callable[[str], Session]:
    """Open a context of ``settings``' kubeconfig as ``gputui --context`` does (``:ctx``):
    without a terminal prompt (the TUI holds the terminal). Nothing connects until the
    session starts; nothing is recorded (``--record`` records the first context only)."""

    def open_one(name: str) -> Session:
        from gputui.sources.connect import open_metrics
        from gputui.sources.contexts import open_context

        source = open_context(settings, name)
        metrics = open_metrics(replace(settings, context=source.target.context), source)
        return session_of(settings, source, writer=_writer(settings, source),
                          metrics=metrics, opener=open_one)

    return open_one


#: epoch seconds beyond any calendar a header can print (year ~5000)
MAX_TIME = 1e11


def _open_replay(settings: Settings, path: Path) -> Session:
    """The session on the recording at ``path``: no runner, no opener, a cursor that opens
    at the first complete moment, as ``check --replay`` names it (a session recorded from
    its start spent its first seconds, or minutes on a big cluster, loading)."""
    import math

    from gputui.domain.replay_cursor import ReplayCursor
    from gputui.sources.tape.format import TapeError
    from gputui.sources.tape.reader import TapeReader
    from gputui.sources.tape.source import TapeMetrics, TapeSource

    reader = TapeReader.open(path)
    if not all(math.isfinite(t) and abs(t) < MAX_TIME for t in (reader.start, reader.end)):
        raise TapeError(f"recording {path} is damaged (its times are not times)")
    cursor = ReplayCursor(reader.change_times(), reader.start, reader.end,
                          monotonic=time.monotonic, at=reader.first_complete())
    source = TapeSource(reader, cursor, reader.thresholds(settings.thresholds))
    metrics = TapeMetrics(reader, cursor, settings.refresh)
    return Session(source, lambda: cursor.position, metrics, replay=source)


def _writer(settings: Settings, source: ClusterSource) -> ClusterWriter | None:
    """The writer to the cluster a live source reads: read-only from the start in a
    context matching ``read_only_contexts`` or under ``--read-only``."""
    from gputui.sources.writer import writer_for_source

    context = source_context(source) or ""
    return writer_for_source(source, read_only=is_read_only(settings, context))


def _source_clock(source: ClusterSource) -> Callable[[], float]:
    """The source's own clock (the emulated cluster's, sped up) or the wall clock."""
    clock = getattr(source, "clock", None)
    return clock if callable(clock) else time.time
