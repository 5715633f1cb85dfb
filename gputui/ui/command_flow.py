"""Running commands: the ``:`` line, the palette, views, jumps, back and help (mixed into
the app).

Commands come from the registry (:mod:`gputui.ui.commands`) by id; a command scoped to a view
first switches to that view, so it acts on what the operator sees there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.screen import Screen

from gputui.ui.action_flow import ActionFlow
from gputui.ui.commands import binding_scope, by_alias, command
from gputui.ui.context_switch import ContextSwitch
from gputui.ui.contracts import CommandRequested, JumpRequested, NodeScoped
from gputui.ui.replay_controls import ONLY_IN_REPLAY, ReplayControls
from gputui.ui.screens.base import PANE_TARGETS, GpuScreen
from gputui.ui.screens.command_line import CommandLine
from gputui.ui.screens.help import HelpScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.typeahead import TypeAhead

#: registry scope -> the view its actions live in
SCOPE_VIEWS = {"nodes": "nodes", "findings": "findings"}


class CommandFlow(ActionFlow):
    """Mixed into the app (under :class:`~gputui.ui.app.GpuTuiApp`)."""

    keymap: dict[str, str]
    typeahead: TypeAhead
    contexts: ContextSwitch
    replay: ReplayControls | None
    #: hands a screen the newest snapshot (the app's refresh path)
    _deliver: Callable[[Screen[Any]], None]

    def on_command_requested(self, message: CommandRequested) -> None:
        self.call_later(self.run_command, message.command_id)

    async def action_switch_view(self, view: str) -> None:
        """Number keys and ``:`` names: switch to a view (closing pushed screens)."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        if self.current_mode != view:
            await self.switch_mode(view)

    async def action_back(self) -> None:
        """``esc``: close a pushed screen, leave a view, or clear filter / faults-only / marks."""
        if len(self.screen_stack) > 1:
            self.pop_screen()
            return
        screen = self.screen
        if isinstance(screen, GpuScreen) and screen.go_back():
            return
        if self.current_mode != "nodes":
            await self.switch_mode("nodes")

    def action_mark_elsewhere(self) -> None:
        """``space`` where no view marks nodes (the node list's own ``space`` comes first):
        a key that does nothing says why."""
        if isinstance(self.screen, NodesScreen):
            why = "no node under the cursor to mark"
        else:
            why = ("marks are the node list's (1): here the actions act on the selected "
                   "row")
        self.notify(f"space: {why}", severity="warning")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.keymap, self.action_blocks(), self.current_mode))

    def action_command_line(self) -> None:
        self.push_screen(CommandLine(contexts=self.contexts.names()),
                         callback=self._command_typed)

    def _command_typed(self, text: str | None) -> None:
        if not text:
            return
        word, _, rest = text.partition(" ")
        cmd = by_alias(word)
        if cmd is None:
            self.notify(f"unknown command :{word} (try :help)", severity="warning")
            return
        self.typeahead.begin()  # keys typed after Enter belong to the view it opens
        self.call_later(self._run_then, cmd.id, rest.strip())

    async def _run_then(self, command_id: str, argument: str) -> None:
        try:
            await self._run_command_line(command_id, argument)
        finally:
            self.typeahead.end()

    async def _run_command_line(self, command_id: str, argument: str) -> None:
        if argument and command_id == "view_ctx":  # :ctx NAME switches directly
            self.contexts.switch(argument)
            return
        if argument and command_id == "replay.time":  # :at TIME jumps the replay's cursor
            if self.replay is None:
                self.notify(f":at: {ONLY_IN_REPLAY}", severity="warning")
            else:
                self.replay.jump(argument)
            return
        await self.run_command(command_id)
        if argument and command_id == "view_nodes" and isinstance(self.screen, NodesScreen):
            self.screen.apply_filter(argument)
        elif argument and command_id == "theme" and argument in self.available_themes:
            self.theme = argument

    async def run_command(self, command_id: str) -> None:
        """Run a registry command by id (palette, ``:`` line), in the view it belongs to."""
        cmd = command(command_id)
        view = SCOPE_VIEWS.get(binding_scope(cmd))
        if view is None:
            await self.run_action(cmd.action)
            return
        await self.action_switch_view(view)
        await self.run_action(cmd.action, self.screen)

    # ------------------------------------------------------------------ navigation
    def jump_to(self, node: str | None, pane: str) -> None:
        """Show ``pane`` (a :class:`~gputui.domain.pane.Pane`) for ``node``, from anywhere."""
        self.call_later(self._jump, node, pane)

    async def _jump(self, node: str | None, pane: str) -> None:
        view, tab = PANE_TARGETS.get(pane, ("nodes", None))
        while len(self.screen_stack) > 1:
            self.pop_screen()
        if self.current_mode != view:
            await self.switch_mode(view)
        screen = self.screen
        self._deliver(screen)
        if node is not None and isinstance(screen, NodeScoped):
            screen.show_node(node)
        if tab is not None and isinstance(screen, NodesScreen):
            screen.show_tab(tab, focus=True)

    def on_jump_requested(self, message: JumpRequested) -> None:
        self.jump_to(message.node, message.pane)
