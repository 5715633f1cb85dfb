"""The key table that help and README show, generated from the one command registry.

Each view's help lists its own keys first (the keyed node actions, which act on that view's
selection, then the view's keys), then every other command once, by scope.
"""

from __future__ import annotations

from collections.abc import Mapping

from gputui.actions.base import Scope
from gputui.actions.registry import ACTIONS
from gputui.ui.commands import (
    ACTION_COMMANDS,
    COMMANDS,
    SCOPE_TITLES,
    SCOPES,
    Command,
    effective_keys,
    key_label,
)


def key_table(keymap: Mapping[str, str] | None = None,
              blocked: Mapping[str, str] | None = None,
              view: str | None = None) -> list[tuple[str, str, str, str]]:
    """(scope title, keys, title, tooltip) for every command: the help screen and README.

    ``blocked`` (action id -> why) marks greyed actions with their reason. ``view`` (a scope:
    ``nodes``, ``upgrades``...) puts that view's keys first, as help shows them: the keyed
    node actions (cordon, uncordon, drain: on the view's selection), one line pointing to
    ``:`` and the palette for everything else, then its own keys; every command is still
    listed once.
    """
    first = _view_first(view, keymap) if view in SCOPE_TITLES and view != "global" else []
    listed = {cmd.id for cmd in first}
    rows = []
    if first:
        heading = SCOPE_TITLES[str(view)]
        keyed = [cmd for cmd in first if cmd.scope == "actions"]
        rows += [_row(heading, cmd, keymap, blocked) for cmd in keyed]
        rows.append((heading, ": ctrl+p", "Everything else",
                     "Every other action and view by name: type : or open the palette."))
        rows += [_row(heading, cmd, keymap, blocked) for cmd in first if cmd not in keyed]
    for scope in SCOPES:
        for cmd in COMMANDS:
            if cmd.scope == scope and cmd.id not in listed:
                rows.append(_row(SCOPE_TITLES[scope], cmd, keymap, blocked))
    return rows


def _view_first(view: str | None, keymap: Mapping[str, str] | None) -> list[Command]:
    """The commands help lists first for ``view``: the actions with a key bound there
    (the ones an operator reaches for), then the view's own keys."""
    actions = [cmd for cmd in ACTION_COMMANDS
               if _node_action(cmd.id) and effective_keys(cmd, keymap)]
    return actions + [cmd for cmd in COMMANDS if cmd.scope == view]


def _node_action(action_id: str) -> bool:
    """Whether the action acts on nodes (its keys act on each view's selection)."""
    return any(act.id == action_id and act.scope is Scope.NODES for act in ACTIONS)


def _row(heading: str, cmd: Command, keymap: Mapping[str, str] | None,
         blocked: Mapping[str, str] | None) -> tuple[str, str, str, str]:
    keys = key_label(effective_keys(cmd, keymap))
    if cmd.aliases and not keys:
        keys = f":{cmd.aliases[0]}"
    tooltip = cmd.tooltip
    if blocked and cmd.id in blocked:
        tooltip += f" (unavailable: {blocked[cmd.id]})"
    return heading, keys, cmd.title, tooltip
