"""``CommandFlow``: running commands: the ``:`` line, the palette, views, jumps, back and help.

A plain object the app holds (``app.commands``); the app's key actions and message handlers
hand it their work in one line each.

Commands come from the registry (:mod:`gputui.ui.commands`) by id; a command scoped to a view
first switches to that view, so it acts on what the operator sees there.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from textual.actions import ActionParseResult
from textual.dom import DOMNode
from textual.screen import Screen

from gputui.ui.action_flow import ActionFlow
from gputui.ui.app_host import AppSurface
from gputui.ui.commands import binding_scope, by_alias, command
from gputui.ui.context_switch import ContextSwitch
from gputui.ui.contracts import NodeScoped
from gputui.ui.replay_controls import ONLY_IN_REPLAY, ReplayControls
from gputui.ui.screens.base import PANE_TARGETS, GpuScreen
from gputui.ui.screens.command_line import CommandLine
from gputui.ui.screens.help import HelpScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.typeahead import TypeAhead

#: registry scope -> the view its actions live in
SCOPE_VIEWS = {"nodes": "nodes", "findings": "findings"}


class CommandHost(AppSurface, Protocol):
    """What of the app the commands use: modes, themes, its keymap, the flows they start."""

    keymap: dict[str, str]
    typeahead: TypeAhead
    contexts: ContextSwitch
    replay: ReplayControls | None
    actions: ActionFlow
    theme: str

    @property
    def current_mode(self) -> str: ...

    @property
    def available_themes(self) -> Any: ...

    def switch_mode(self, mode: str) -> Awaitable[None]: ...

    def run_action(self, action: str | ActionParseResult,
                   default_namespace: DOMNode | None = None) -> Awaitable[bool]: ...

    def deliver(self, screen: Screen[Any]) -> None:
        """Hand ``screen`` the newest snapshot (the app's refresh path)."""
        ...


class CommandFlow:
    """Views, jumps, back, help and every command by its registry id."""

    def __init__(self, host: CommandHost) -> None:
        self.host = host

    async def switch_view(self, view: str) -> None:
        """Number keys and ``:`` names: switch to a view (closing pushed screens)."""
        host = self.host
        while len(host.screen_stack) > 1:
            host.pop_screen()
        if host.current_mode != view:
            await host.switch_mode(view)

    async def back(self) -> None:
        """``esc``: close a pushed screen, leave a view, or clear filter / faults-only / marks."""
        host = self.host
        if len(host.screen_stack) > 1:
            host.pop_screen()
            return
        screen = host.screen
        if isinstance(screen, GpuScreen) and screen.go_back():
            return
        if host.current_mode != "nodes":
            await host.switch_mode("nodes")

    def mark_elsewhere(self) -> None:
        """``space`` where no view marks nodes (the node list's own ``space`` comes first):
        a key that does nothing says why."""
        if isinstance(self.host.screen, NodesScreen):
            why = "no node under the cursor to mark"
        else:
            why = ("marks are the node list's (1): here the actions act on the selected "
                   "row")
        self.host.notify(f"space: {why}", severity="warning")

    def help(self) -> None:
        """``?``: the keys of the view shown, greyed ones with their reasons."""
        host = self.host
        if not isinstance(host.screen, HelpScreen):
            host.push_screen(HelpScreen(host.keymap, host.actions.blocks(), host.current_mode))

    def command_line(self) -> None:
        """``:``: the command line; what is typed comes back to :meth:`typed`."""
        self.host.push_screen(CommandLine(contexts=self.host.contexts.names()),
                              callback=self.typed)

    def typed(self, text: str | None) -> None:
        """A line typed at ``:`` (or the replay's ``:at`` prompt): run it."""
        if not text:
            return
        word, _, rest = text.partition(" ")
        cmd = by_alias(word)
        if cmd is None:
            self.host.notify(f"unknown command :{word} (try :help)", severity="warning")
            return
        self.host.typeahead.begin()  # keys typed after Enter belong to the view it opens
        self.host.call_later(self._run_then, cmd.id, rest.strip())

    async def _run_then(self, command_id: str, argument: str) -> None:
        try:
            await self._run_command_line(command_id, argument)
        finally:
            self.host.typeahead.end()

    async def _run_command_line(self, command_id: str, argument: str) -> None:
        host = self.host
        if argument and command_id == "view_ctx":  # :ctx NAME switches directly
            host.contexts.switch(argument)
            return
        if argument and command_id == "replay.time":  # :at TIME jumps the replay's cursor
            if host.replay is None:
                host.notify(f":at: {ONLY_IN_REPLAY}", severity="warning")
            else:
                host.replay.jump(argument)
            return
        await self.run(command_id)
        if argument and command_id == "view_nodes" and isinstance(host.screen, NodesScreen):
            host.screen.apply_filter(argument)
        elif argument and command_id == "theme" and argument in host.available_themes:
            host.theme = argument

    async def run(self, command_id: str) -> None:
        """Run a registry command by id (palette, ``:`` line), in the view it belongs to."""
        cmd = command(command_id)
        view = SCOPE_VIEWS.get(binding_scope(cmd))
        if view is None:
            await self.host.run_action(cmd.action)
            return
        await self.switch_view(view)
        await self.host.run_action(cmd.action, self.host.screen)

    # ------------------------------------------------------------------ navigation
    def jump_to(self, node: str | None, pane: str) -> None:
        """Show ``pane`` (a :class:`~gputui.domain.pane.Pane`) for ``node``, from anywhere."""
        self.host.call_later(self._jump, node, pane)

    async def _jump(self, node: str | None, pane: str) -> None:
        view, tab = PANE_TARGETS.get(pane, ("nodes", None))
        await self.switch_view(view)
        screen = self.host.screen
        self.host.deliver(screen)
        if node is not None and isinstance(screen, NodeScoped):
            screen.show_node(node)
        if tab is not None and isinstance(screen, NodesScreen):
            screen.show_tab(tab, focus=True)
