"""The command palette provider: every registry command, searchable by title, ``:`` name
and tooltip.

Each entry's first line is the title, then its ``:`` name and its key (``Cordon  :cordon
· c``): the palette is where a newcomer learns what to type on the ``:`` line, so the name
is shown, not only matched. The tooltip follows in full (it wraps; it is never cut), with
why the command is unavailable when it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

from gputui.ui.commands import Command, effective_keys, key_label, palette_commands
from gputui.ui.contracts import CommandHost, CommandRequested


def command_name(cmd: Command) -> str:
    """``:cordon``: what the ``:`` line takes for ``cmd`` ("" when it takes none)."""
    return f":{cmd.aliases[0]}" if cmd.aliases else ""


class GpuCommands(Provider):
    """Lists :data:`gputui.ui.commands.COMMANDS` (those marked for the palette)."""

    def _keys(self, cmd: Command) -> str:
        host = self.app if isinstance(self.app, CommandHost) else None
        return key_label(effective_keys(cmd, host.keymap if host else {}))

    def _prompt(self, cmd: Command, title: Content | str) -> Content:
        """``Cordon  :cordon · c``: the title, then how to reach it without the palette."""
        ways = " · ".join(way for way in (command_name(cmd), self._keys(cmd)) if way)
        shown = title if isinstance(title, Content) else Content(title)
        return Content.assemble(shown, (f"  {ways}", "dim")) if ways else shown

    def _help(self, cmd: Command) -> str:
        host = self.app if isinstance(self.app, CommandHost) else None
        blocks: Mapping[str, str] = host.action_blocks() if host else {}
        tooltip = f"{cmd.tooltip}  (unavailable: {blocks[cmd.id]})" if cmd.id in blocks \
            else cmd.tooltip
        # help text is markup: a key such as "/" or "[" must not be read as a tag
        return escape(tooltip)

    def _run(self, cmd: Command) -> None:
        self.app.post_message(CommandRequested(cmd.id))

    async def discover(self) -> Hits:
        for cmd in palette_commands():
            yield DiscoveryHit(self._prompt(cmd, cmd.title), partial(self._run, cmd),
                               text=cmd.title, help=self._help(cmd))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cmd in palette_commands():
            names = [*cmd.aliases, *(f":{alias}" for alias in cmd.aliases)]
            score = max([matcher.match(cmd.title), matcher.match(cmd.tooltip) * 0.5]
                        + [matcher.match(name) * 0.9 for name in names])
            if score > 0:
                yield Hit(score, self._prompt(cmd, matcher.highlight(cmd.title)),
                          partial(self._run, cmd), text=cmd.title, help=self._help(cmd))
