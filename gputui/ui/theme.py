"""The ``gputui`` theme, and the :class:`Palette` resolved from the active theme's variables.

Why here: stylesheets read ``$gpu-*`` variables and severity CSS classes (``sev-critical``...);
Rich ``Text`` inside DataTables and renderables cannot read CSS variables, so this module
resolves each role's variable of the *active* theme to a Rich colour (:func:`theme_palette`).
Which role a severity or state has, and what is bold, is decided once, in
:mod:`gputui.ui.render.style` (which imports nothing from here). Built-in Textual
themes do not define ``$gpu-*`` variables, so :func:`gpu_variables` derives them from each
theme's own success/warning/error colours; the ``gputui`` theme sets them explicitly.
Colours are named colours, never hex literals (STYLE.md rule 8).

Every severity is shown by a symbol AND a word as well as a colour, so ``NO_COLOR`` and
16-colour terminals stay readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from rich.style import Style
from textual.color import Color
from textual.theme import Theme

from gputui.domain.model import Severity
from gputui.ui.render.style import ROLES, Palette, role_variable

GPUTUI_THEME: Final = Theme(
    name="gputui",
    primary="dodgerblue",
    secondary="slateblue",
    accent="darkorange",
    warning="gold",
    error="crimson",
    success="mediumseagreen",
    foreground="gainsboro",
    background="rgb(16,18,22)",
    surface="rgb(28,31,37)",
    panel="rgb(38,42,50)",
    dark=True,
    variables={
        "gpu-ok": "mediumseagreen",
        "gpu-warn": "gold",
        "gpu-crit": "tomato",
        "gpu-info": "deepskyblue",
        "gpu-paused": "mediumpurple",
        "gpu-progress": "lightskyblue",
        "gpu-muted": "gray",
        "gpu-unknown": "orange",
        "footer-key-foreground": "darkorange",
    },
)

#: theme variable -> the built-in colour it falls back to for themes that lack it
_FALLBACKS: Final = {
    "gpu-ok": "success", "gpu-warn": "warning", "gpu-crit": "error", "gpu-info": "primary",
    "gpu-paused": "secondary", "gpu-progress": "accent", "gpu-muted": "foreground-muted",
    "gpu-unknown": "warning",
}


def severity_class(severity: Severity | None) -> str:
    """CSS class for a severity: ``sev-critical``, ``sev-warning``, ``sev-info``, ``sev-none``."""
    return f"sev-{severity.value}" if severity is not None else "sev-none"


def gpu_variables(variables: Mapping[str, str]) -> dict[str, str]:
    """The ``gpu-*`` variables missing from a theme's generated variables, from fallbacks."""
    return {name: variables[base] for name, base in _FALLBACKS.items()
            if name not in variables and base in variables}


def _colour(variables: Mapping[str, str], name: str) -> Style:
    """The colour of theme variable ``name`` (its fallback when the theme lacks it);
    translucent values are blended over the background, which Rich cannot do."""
    value = variables.get(name) or variables.get(_FALLBACKS.get(name, ""), "")
    if not value:
        return Style()
    try:
        color = Color.parse(value)
    except Exception:  # noqa: BLE001 - a theme value we cannot read is shown uncoloured
        return Style()
    background = variables.get("background")
    if color.a < 1 and background:
        color = Color.parse(background).blend(color, color.a).with_alpha(1)
    return Style(color=color.rich_color)


def theme_palette(variables: Mapping[str, str]) -> Palette:
    """The palette of a theme's variables (``app.theme_variables``): every role's colour.

    The app builds it once per theme change and hands it down; which role a state has and
    whether it is bold is decided in :mod:`gputui.ui.render.style`, not here.
    """
    return Palette.from_colours({role: _colour(variables, role_variable(role))
                                 for role in ROLES})


__all__ = ["GPUTUI_THEME", "gpu_variables", "severity_class", "theme_palette"]
