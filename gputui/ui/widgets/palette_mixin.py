"""The theme palette for widgets that draw Rich renderables.

Rich text cannot read CSS variables, so widgets resolve the active theme's ``$gpu-*``
variables into a :class:`~gputui.ui.render.style.Palette` when they render; the palette is
rebuilt on theme change because it is cheap and a stale palette would keep old colours.
"""

from __future__ import annotations

from textual.widget import Widget

from gputui.ui.render.style import PLAIN, Palette


def widget_palette(widget: Widget) -> Palette:
    """The palette of the app ``widget`` runs in (colourless before it is mounted)."""
    try:
        app = widget.app
    except Exception:  # noqa: BLE001 - not attached to an app yet: no colour
        return PLAIN
    variables = getattr(app, "theme_variables", None) or app.get_css_variables()
    return Palette.from_variables(variables)
