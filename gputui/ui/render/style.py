"""The one mapping from domain severity and status to symbols, words and colour roles.

Every view (node list, findings, detail panes, MIG cards) reads it from here; ``theme.py``
only turns a role's theme variable into a Rich style.

Status and severity are always shown as a symbol *and* a word, so a ``NO_COLOR`` or
16-colour terminal over a slow SSH link reads the same facts as a true-colour one; colour
only adds emphasis. Colours never appear as literals here: a :class:`Palette` maps the
roles (``ok``, ``warn``, ``crit``, ``info``, ``paused``, ``muted``, ``progress``) to Rich
styles, and widgets build it from the active theme's ``$gpu-*`` variables. Renderers take a
palette argument whose default is colourless, which keeps unit tests free of any app.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rich.style import Style

from gputui.domain.model import Severity, StageStatus

ROLES = ("ok", "warn", "crit", "info", "paused", "muted", "progress", "unknown")


STATUS_SYMBOL: Mapping[StageStatus, str] = MappingProxyType({
    StageStatus.READY: "✔",
    StageStatus.PROGRESSING: "◐",
    StageStatus.FAILED: "✖",
    StageStatus.PAUSED: "‖",
    StageStatus.DISABLED: "–",
    StageStatus.ABSENT: "?",
    StageStatus.UNKNOWN: "?",
})

STATUS_ROLE: Mapping[StageStatus, str] = MappingProxyType({
    StageStatus.READY: "ok",
    StageStatus.PROGRESSING: "progress",
    StageStatus.FAILED: "crit",
    StageStatus.PAUSED: "paused",
    StageStatus.DISABLED: "muted",
    StageStatus.ABSENT: "muted",
    StageStatus.UNKNOWN: "unknown",
})

SEVERITY_SYMBOL: Mapping[Severity, str] = MappingProxyType({
    Severity.CRITICAL: "✖", Severity.WARNING: "▲", Severity.INFO: "●",
})

SEVERITY_ROLE: Mapping[Severity, str] = MappingProxyType({
    Severity.CRITICAL: "crit", Severity.WARNING: "warn", Severity.INFO: "info",
})

#: the short word where a column is narrow (node list, findings table)
SEVERITY_SHORT: Mapping[Severity, str] = SEVERITY_ROLE

#: a node (or the header's count) whose findings rest on something that could not be read:
#: never "✔ ok" (issue 18: a forbidden read looked healthy); same symbol as an unknown stage
UNKNOWN_SYMBOL = STATUS_SYMBOL[StageStatus.UNKNOWN]
UNKNOWN_WORD = f"{UNKNOWN_SYMBOL} unknown"
UNKNOWN_ROLE = STATUS_ROLE[StageStatus.UNKNOWN]


def role_variable(role: str) -> str:
    """The theme variable that colours a role: ``crit`` -> ``gpu-crit``."""
    return f"gpu-{role}"

#: MIG manager state label values → role
MIG_STATE_ROLE: Mapping[str, str] = MappingProxyType({
    "success": "ok", "pending": "progress", "rebooting": "progress", "failed": "crit",
})


def _no_styles() -> Mapping[str, Style]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Palette:
    """Role → Rich style; an empty palette means "no colour" (tests, ``NO_COLOR``)."""

    styles: Mapping[str, Style] = field(default_factory=_no_styles)

    def role(self, name: str) -> Style:
        """The style of a role; bold for ``crit`` even without colour so it stands out."""
        base = self.styles.get(name, Style())
        return base + Style(bold=True) if name == "crit" else base

    def status(self, status: StageStatus) -> Style:
        """Style of a pipeline stage status."""
        return self.role(STATUS_ROLE[status])

    def severity(self, severity: Severity) -> Style:
        """Style of a finding severity."""
        return self.role(SEVERITY_ROLE[severity])

    @classmethod
    def from_variables(cls, variables: Mapping[str, str]) -> Palette:
        """A palette from the active theme's variables (``app.theme_variables``).

        Resolution (``$gpu-*`` with fallbacks for themes that lack them) is the shell's
        :func:`gputui.ui.theme.var_style`, so every pane colours a role the same way.
        """
        from gputui.ui.theme import var_style

        styles = {role: var_style(variables, role_variable(role)) for role in ROLES}
        return cls(MappingProxyType(styles))


PLAIN = Palette()


def status_word(status: StageStatus) -> str:
    """``✔ ready``, ``✖ failed``...: symbol and word together."""
    return f"{STATUS_SYMBOL[status]} {status.value}"


def severity_word(severity: Severity) -> str:
    """``✖ critical``, ``▲ warning``, ``● info``."""
    return f"{SEVERITY_SYMBOL[severity]} {severity.value}"


def status_class(status: StageStatus) -> str:
    """The CSS class a widget puts on an element showing ``status`` (``-status-failed``)."""
    return f"-status-{status.value}"
