"""Where the app's stylesheets are: one per screen family, under ``styles/``.

A source checkout reads ``styles/`` at the top of the tree; an installed wheel ships the same
files as ``gputui/_styles``.
"""

from __future__ import annotations

from pathlib import Path, PurePath

#: one stylesheet per screen family (styles/), all shipped in the wheel
STYLESHEETS = ("app", "nodes", "findings", "help", "detail", "upgrades", "mig", "pod_log",
               "confirm", "ops", "joins", "summary", "timeline")


def styles_dir() -> Path:
    """``styles/`` of the source tree, or ``gputui/_styles`` inside an installed wheel."""
    package = Path(__file__).resolve().parents[1]
    shipped = package / "_styles"
    return shipped if shipped.is_dir() else package.parent / "styles"


def stylesheet_paths() -> list[str | PurePath]:
    """The app's ``CSS_PATH``: every stylesheet, in cascade order."""
    return [styles_dir() / f"{name}.tcss" for name in STYLESHEETS]
