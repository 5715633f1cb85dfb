"""The palette a widget draws Rich renderables with: the one its app holds.

Rich text cannot read CSS variables, so the app resolves the active theme's ``$gpu-*``
colours into one :class:`~gputui.ui.render.style.Palette` per theme change
(:func:`gputui.ui.theme.theme_palette`) and every widget draws with that same object;
none builds its own, so no two panes can colour a role differently.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from textual.widget import Widget

from gputui.ui.render.style import PLAIN, Palette
from gputui.ui.textual_private import NoActiveAppError


@runtime_checkable
class PaletteHolder(Protocol):
    """An app that hands a palette down (the shell, and the panes' test host)."""

    palette: Palette


def widget_palette(widget: Widget) -> Palette:
    """The palette of the app ``widget`` runs in (colourless before it is mounted, or in
    an app that holds none)."""
    try:
        app = widget.app
    except NoActiveAppError:  # not attached to an app yet: no colour
        return PLAIN
    return app.palette if isinstance(app, PaletteHolder) else PLAIN
