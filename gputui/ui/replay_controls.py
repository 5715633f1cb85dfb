"""The replay's keys: a plain object the app holds when its session travels in time.

A replay used to be an app subclass that switched features off; now it is a session without a
runner and with a cursor (:mod:`gputui.session`), and what only a replay does lives here:

* the replay keys (registry scope ``replay``): space, left/right, ``g``/``G``, ``t``,
  ``]``/``[``. The app binds them always; they are priority bindings, ahead of the node
  list's ``space`` (mark: nothing can act on marks in a replay) and the tables' left/right,
  but :meth:`ReplayControls.allows` hides them outside a replay and gives them up while a
  text field (``/`` filter, ``:`` line) or a dialog has the focus, so typing stays typing;
* ``:at TIME`` (and ``t``): the cursor jumps to the typed time, or one line says why not;
* the recorded timeline up to the cursor, handed to ``:timeline`` on every move that
  changes it; nothing is derived from the replayed snapshots, and this machine's audit log
  is not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input

from gputui.actions.registry import ACTIONS
from gputui.domain.timeline_event import events_from_json
from gputui.ui.app_host import AppSurface
from gputui.ui.contracts import TimelineRecorded
from gputui.ui.screens.command_line import CommandLine, CommandSuggester

if TYPE_CHECKING:  # the UI loads no HTTP client at import (tests/ui/test_layering.py)
    from textual.message import Message

    from gputui.domain.replay_cursor import ReplayCursor
    from gputui.sources.tape.source import TapeSource

#: why every action is greyed in a replay
READ_ONLY = "this is a replay of a recording (read-only, nothing is sent)"
#: the ``:`` word of the time prompt (``replay.time``'s alias)
AT_WORD = "at"
#: what the replay keys do outside a replay (``:at`` typed in a live session)
ONLY_IN_REPLAY = "only in a replay of a recording (gputui replay FILE)"


class TimePrompt(CommandLine):
    """``t``: the ``:`` line with ``at `` typed, so Enter runs ``:at TIME``."""

    def compose(self) -> Iterable[Widget]:
        yield Input(value=f"{AT_WORD} ", placeholder="at 14:02:11 (UTC), +5m, -30s, "
                    "2026-12-01T14:02:11Z", suggester=CommandSuggester(()),
                    select_on_focus=False, id="command-input")


class ReplayHost(AppSurface, Protocol):
    """What of the app the replay keys use besides the App surface: its focus, messages."""

    @property
    def focused(self) -> Widget | None: ...

    def post_message(self, message: Message) -> bool: ...


class ReplayControls:
    """The cursor keys, ``:at`` and the recorded timeline of one replayed session."""

    def __init__(self, host: ReplayHost, source: TapeSource,
                 command_typed: Callable[[str | None], None]) -> None:
        self.host = host
        self.cursor: ReplayCursor = source.cursor
        self._command_typed = command_typed
        source.on_timeline = self._timeline_from_source

    @staticmethod
    def action_blocks() -> dict[str, str]:
        """Every action, greyed with the same reason: there is no cluster to act on."""
        return {act.id: READ_ONLY for act in ACTIONS}

    def allows(self) -> bool:
        """Whether a replay key acts now: not while a text field or a dialog has the keys."""
        return not (isinstance(self.host.focused, Input)
                    or isinstance(self.host.screen, ModalScreen))

    def key(self, what: str) -> None:
        """space, left/right, g/G, t, ]/[: move the cursor; the source builds that time."""
        cursor = self.cursor
        moves: dict[str, Callable[[], object]] = {
            "toggle": cursor.toggle, "prev": lambda: cursor.step(-1),
            "next": lambda: cursor.step(+1), "start": cursor.to_start, "end": cursor.to_end,
            "faster": cursor.faster, "slower": cursor.slower}
        if what == "time":
            self.host.push_screen(TimePrompt(), callback=self._command_typed)
            return
        move = moves.get(what)
        if move is not None:
            move()
        if what in ("faster", "slower"):
            self.host.notify(f"replay speed {cursor.speed:g}×", timeout=2)

    def jump(self, argument: str) -> None:
        """``:at TIME``: jump to the typed time, or say why not in one line."""
        from gputui.domain.at_time import parse_at

        try:
            at = parse_at(argument, self.cursor.start, self.cursor.end)
        except ValueError as error:
            self.host.notify(f":at: {error}", severity="warning")
            return
        self.cursor.jump(at)

    def _timeline_from_source(self, events: list[dict[str, Any]]) -> None:
        """Replay thread -> message (never touch widgets here); a damaged entry of the
        recording is skipped."""
        self.host.post_message(TimelineRecorded(tuple(events_from_json(events)[0])))
