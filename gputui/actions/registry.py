"""The one registry of actions: keys, the palette, ``?`` help and ``:`` names come from here.

Each action module exports an ``ACTIONS`` tuple; this module concatenates them in the order
help lists them. The UI's command registry (``gputui.ui.commands``) turns every entry into a
command, so an action that is not listed here does not exist in the app.
"""

from __future__ import annotations

from typing import Final

from gputui.actions import canary, drain, labels, mig, node, upgrade
from gputui.actions.base import Action, Permission

ACTIONS: Final[tuple[Action, ...]] = (*node.ACTIONS, *drain.ACTIONS, *labels.ACTIONS,
                                      *mig.ACTIONS, *upgrade.ACTIONS, *canary.ACTIONS)

_BY_ID: Final = {action.id: action for action in ACTIONS}


def action(action_id: str) -> Action:
    """The action with ``action_id`` (KeyError if none: a typo is a bug)."""
    return _BY_ID[action_id]


def all_permissions(actions: tuple[Action, ...] = ACTIONS) -> tuple[Permission, ...]:
    """Every permission the registered actions declare, once each, in a stable order."""
    return tuple(dict.fromkeys(p for a in actions for p in a.permissions))
