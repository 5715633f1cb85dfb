"""The command palette provider: every registry command, searchable by title and tooltip."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from gputui.ui.commands import Command, effective_keys, key_label, palette_commands
from gputui.ui.contracts import CommandHost, CommandRequested


class GpuCommands(Provider):
    """Lists :data:`gputui.ui.commands.COMMANDS` (those marked for the palette)."""

    def _help(self, cmd: Command) -> str:
        host = self.app if isinstance(self.app, CommandHost) else None
        keys = key_label(effective_keys(cmd, host.keymap if host else {}))
        blocks: Mapping[str, str] = host.action_blocks() if host else {}
        tooltip = f"{cmd.tooltip}  (unavailable: {blocks[cmd.id]})" if cmd.id in blocks \
            else cmd.tooltip
        # help text is markup: a key such as "/" or "[" must not be read as a tag
        return escape(f"{tooltip}  (key: {keys})" if keys else tooltip)

    def _run(self, cmd: Command) -> None:
        self.app.post_message(CommandRequested(cmd.id))

    async def discover(self) -> Hits:
        for cmd in palette_commands():
            yield DiscoveryHit(cmd.title, partial(self._run, cmd), help=self._help(cmd))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cmd in palette_commands():
            score = max(matcher.match(cmd.title), matcher.match(cmd.tooltip) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(cmd.title), partial(self._run, cmd),
                          help=self._help(cmd))
