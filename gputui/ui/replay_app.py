"""``ReplayApp``: the same TUI on a recording (``gputui replay FILE``), read-only by construction.

What differs from the live app, and why:

* no writer exists (the source has no cluster): every action is greyed with
  :data:`READ_ONLY`, and ``:ctx`` has no kubeconfig to switch to (the source has no
  ``target``), so nothing in the app can send a request;
* the replay keys (registry scope ``replay``): space, left/right, ``g``/``G``, ``t``,
  ``]``/``[``. They are priority bindings, ahead of the node list's ``space`` (mark: nothing
  can act on marks here) and the tables' left/right (horizontal scroll), but
  :meth:`ReplayApp.check_action` gives them up while a text field (``/`` filter, ``:`` line)
  or a dialog has the focus, so typing stays typing;
* the recorded timeline up to the cursor is handed to ``:timeline`` on every move that
  changes it; nothing is derived from the replayed snapshots, and this machine's audit log
  is not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input

from gputui.actions.registry import ACTIONS
from gputui.domain.timeline_event import events_from_json
from gputui.settings import Settings
from gputui.ui.app import GpuTuiApp
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import TimelineRecorded
from gputui.ui.screens.command_line import CommandLine, CommandSuggester

if TYPE_CHECKING:  # the UI loads no HTTP client at import (tests/ui/test_layering.py)
    from gputui.sources.metrics import MetricsFeed
    from gputui.sources.tape.source import TapeSource

#: why every action is greyed in a replay
READ_ONLY = "this is a replay of a recording (read-only, nothing is sent)"
#: why ``:ctx`` does nothing in a replay
NO_CONTEXTS = "a replay shows one recording; there is no cluster to switch to"
#: the ``:`` word of the time prompt (``replay.time``'s alias)
AT_WORD = "at"


class TimePrompt(CommandLine):
    """``t``: the ``:`` line with ``at `` typed, so Enter runs ``:at TIME``."""

    def compose(self) -> Iterable[Widget]:
        yield Input(value=f"{AT_WORD} ", placeholder="at 14:02:11 (UTC), +5m, -30s, "
                    "2026-12-01T14:02:11Z", suggester=CommandSuggester(()),
                    select_on_focus=False, id="command-input")


class ReplayApp(GpuTuiApp):
    """The TUI on a :class:`~gputui.sources.replay_source.TapeSource`; build it with
    :func:`make_replay_app`."""

    BINDINGS = bindings_for("replay")

    def __init__(self, settings: Settings, source: TapeSource,
                 clock: Callable[[], float], metrics: MetricsFeed | None = None) -> None:
        super().__init__(settings, source, clock=clock, writer=None, metrics=metrics)
        self.tape_source = source
        self.cursor = source.cursor
        source.on_timeline = self._timeline_from_source
        # nothing is derived from the replayed snapshots or read from this machine's audit
        # log: the timeline shows what was recorded, from the first cursor move on
        self.timeline_given([], since=self.cursor.start)

    def _timeline_from_source(self, events: list[dict[str, Any]]) -> None:
        """Replay thread -> message (never touch widgets here); a damaged entry of the
        recording is skipped."""
        self.post_message(TimelineRecorded(tuple(events_from_json(events)[0])))

    # ------------------------------------------------------------------ read-only
    def action_blocks(self) -> dict[str, str]:
        """Every action, greyed with the same reason: there is no cluster to act on."""
        return {act.id: READ_ONLY for act in ACTIONS}

    def action_contexts(self) -> None:
        """``:ctx``: refused in one sentence (no kubeconfig was read)."""
        self.notify(f":ctx: {NO_CONTEXTS}", severity="warning")

    # ------------------------------------------------------------------ the cursor keys
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Replay keys give way to a focused text field or an open dialog (their keys)."""
        if action == "replay" and (isinstance(self.focused, Input)
                                   or isinstance(self.screen, ModalScreen)):
            return False
        return super().check_action(action, parameters)

    def action_replay(self, what: str) -> None:
        """space, left/right, g/G, t, ]/[: move the cursor; the source builds that time."""
        cursor = self.cursor
        moves: dict[str, Callable[[], object]] = {
            "toggle": cursor.toggle, "prev": lambda: cursor.step(-1),
            "next": lambda: cursor.step(+1), "start": cursor.to_start, "end": cursor.to_end,
            "faster": cursor.faster, "slower": cursor.slower}
        if what == "time":
            self.push_screen(TimePrompt(), callback=self._command_typed)
            return
        move = moves.get(what)
        if move is not None:
            move()
        if what in ("faster", "slower"):
            self.notify(f"replay speed {cursor.speed:g}×", timeout=2)

    async def _run_command_line(self, command_id: str, argument: str) -> None:
        """``:at TIME`` (and ``t``): jump to the typed time, or say why not in one line;
        ``:ctx NAME`` is refused as ``:ctx`` is."""
        if command_id == "view_ctx":
            self.action_contexts()
            return
        if command_id != "replay.time" or not argument:
            await super()._run_command_line(command_id, argument)
            return
        from gputui.domain.at_time import parse_at

        try:
            at = parse_at(argument, self.cursor.start, self.cursor.end)
        except ValueError as error:
            self.notify(f":at: {error}", severity="warning")
            return
        self.cursor.jump(at)

    # ------------------------------------------------------------------ the timeline
    def on_timeline_recorded(self, message: TimelineRecorded) -> None:
        """Hand the recorded events up to the cursor to ``:timeline``."""
        self.timeline_given(message.events, since=self.cursor.start)


def make_replay_app(settings: Settings, source: TapeSource, *, clock: Callable[[], float],
                    metrics: MetricsFeed | None = None) -> ReplayApp:
    """:func:`gputui.ui.app.make_app` for a recording: the same app, the replay's keys and
    header, and no ``writer`` parameter at all (there is nothing a replay could write to).

    Its own factory, not a branch of ``make_app``: the app module must not import this one
    (which extends it), and the UI does not guess a source's kind by its attributes."""
    return ReplayApp(settings, source, clock=clock, metrics=metrics)
