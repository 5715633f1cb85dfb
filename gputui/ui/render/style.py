"""The one mapping from a domain state to its symbol, word, colour role and emphasis.

Every view (node list, findings, header, detail panes, upgrade lanes, MIG cards) reads it
from here, so a state looks the same wherever it appears; ``theme.py`` only resolves each
role's theme variable to a colour once per theme change, and the app hands that
:class:`Palette` down.

Status and severity are always shown as a symbol *and* a word, so a ``NO_COLOR`` or
16-colour terminal over a slow SSH link reads the same facts as a true-colour one; colour
only adds emphasis. Colours never appear as literals here: a :class:`Palette` maps the
roles (``ok``, ``warn``, ``crit``, ``info``, ``paused``, ``muted``, ``progress``,
``unknown``) to Rich styles. Whether a role is also bold is decided here and only here
(:data:`BOLD_ROLES`). Renderers take a palette argument whose default is colourless, which
keeps unit tests free of any app. No Textual import: this is plain Rich (rules test).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rich.style import Style

from gputui.domain import labels as L
from gputui.domain.model import Severity, StageStatus
from gputui.domain.upgrade_state import LANES, UpgradeState

ROLES = ("ok", "warn", "crit", "info", "paused", "muted", "progress", "unknown")
#: no colour at all: the resting state of a fact (Ready, upgrade-done, a driver version)
NEUTRAL = ""
#: roles that are bold as well as coloured, so they stand out without colour too
BOLD_ROLES = frozenset({"crit"})
#: emphasis that is not about a state: headings, names, where a chain breaks
BOLD = Style(bold=True)
#: every role's colour says "not bold" outright, so a role's words inside a bold line (the
#: header's first line) keep the weight their role decides
NOT_BOLD = Style(bold=False)


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


@dataclass(frozen=True, slots=True)
class StateLook:
    """How one state of a label-driven state machine reads: symbol, word, colour role.

    ``settled``: the state a healthy node rests in; a dense table (the node list) leaves it
    uncoloured so that colour marks only what moves or needs eyes.
    """

    word: str
    role: str
    symbol: str = ""
    settled: bool = False

    @property
    def bold(self) -> bool:
        """Whether the state is shown bold as well as coloured."""
        return self.role in BOLD_ROLES

    @property
    def list_role(self) -> str:
        """The role in a dense table: none for a settled state."""
        return NEUTRAL if self.settled else self.role


#: a state value the domain does not know (a newer operator, a hand-edited label):
#: never read as fine
UNKNOWN_LOOK = StateLook("unknown", UNKNOWN_ROLE, UNKNOWN_SYMBOL)

#: driver upgrade state (``nvidia.com/gpu-driver-upgrade-state``) → look; the word is the
#: short name the lanes' flow line uses so all lanes fit in 80 columns. ``done`` is the
#: resting state (neutral, like Ready); ``required`` only waits for a slot, which is not a
#: warning by itself (a stalled queue is a finding); failed is the one that needs a hand.
_UPGRADE: Mapping[str, StateLook] = {
    UpgradeState.UNKNOWN: StateLook("unknown", "muted"),
    UpgradeState.REQUIRED: StateLook("required", "muted"),
    UpgradeState.CORDON: StateLook("cordon", "progress"),
    UpgradeState.WAIT_JOBS: StateLook("jobs", "progress"),
    UpgradeState.POD_DELETION: StateLook("delete", "progress"),
    UpgradeState.DRAIN: StateLook("drain", "progress"),
    UpgradeState.POD_RESTART: StateLook("restart", "progress"),
    UpgradeState.VALIDATION: StateLook("validate", "progress"),
    UpgradeState.UNCORDON: StateLook("uncordon", "progress"),
    UpgradeState.DONE: StateLook("done", NEUTRAL, settled=True),
    UpgradeState.FAILED: StateLook("failed", "crit"),
}
UPGRADE_LOOK: Mapping[str, StateLook] = MappingProxyType(
    {state: _UPGRADE[state] for state in LANES})

#: MIG manager state (``nvidia.com/mig.config.state``) → look; ``""``: no state label yet
_MIG: Mapping[str, StateLook] = {
    # no state label: no MIG config asked for yet, nothing for the MIG manager to do
    "": StateLook("no state", "muted", "?", settled=True),
    L.MIG_STATE_PENDING: StateLook(L.MIG_STATE_PENDING, "progress", "◐"),
    L.MIG_STATE_REBOOTING: StateLook(L.MIG_STATE_REBOOTING, "progress", "◐"),
    L.MIG_STATE_SUCCESS: StateLook(L.MIG_STATE_SUCCESS, "ok", "✔", settled=True),
    L.MIG_STATE_FAILED: StateLook(L.MIG_STATE_FAILED, "crit", "✖"),
}
MIG_LOOK: Mapping[str, StateLook] = MappingProxyType(
    {state: _MIG[state] for state in ("", *L.MIG_STATES)})


#: a node held out of the driver upgrade (``nvidia.com/gpu-driver-upgrade.skip=true``)
HELD_LOOK = StateLook("held", "paused", "‖")


def upgrade_look(state: str | None) -> StateLook:
    """The look of a driver upgrade state (None: no label, as ``""``)."""
    return UPGRADE_LOOK.get(state or "", UNKNOWN_LOOK)


def mig_look(state: str | None) -> StateLook:
    """The look of a MIG manager state (None: no label, as ``""``)."""
    return MIG_LOOK.get(state or "", UNKNOWN_LOOK)


def _no_styles() -> Mapping[str, Style]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Palette:
    """Role → Rich style; an empty palette means "no colour" (tests, ``NO_COLOR``).

    Built once per theme change from the theme's ``$gpu-*`` colours
    (:func:`gputui.ui.theme.theme_palette`) and handed down by the app.
    """

    styles: Mapping[str, Style] = field(default_factory=_no_styles)

    @classmethod
    def from_colours(cls, colours: Mapping[str, Style]) -> Palette:
        """A palette from each role's colour (a role without one gets no colour)."""
        return cls(MappingProxyType({role: colours.get(role, Style()) + NOT_BOLD
                                     for role in ROLES}))

    def colour(self, role: str) -> Style:
        """The role's colour alone: a figure inside a line (the header's counts), where
        bold would shout; ``NEUTRAL`` or an unknown role is no style."""
        return self.styles.get(role, Style())

    def role(self, name: str) -> Style:
        """The style of a state's role: its colour, bold for :data:`BOLD_ROLES`."""
        base = self.colour(name)
        return base + BOLD if name in BOLD_ROLES else base

    def status(self, status: StageStatus) -> Style:
        """Style of a pipeline stage status."""
        return self.role(STATUS_ROLE[status])

    def severity(self, severity: Severity) -> Style:
        """Style of a finding severity."""
        return self.role(SEVERITY_ROLE[severity])

    def look(self, look: StateLook) -> Style:
        """Style of a label-driven state (:func:`upgrade_look`, :func:`mig_look`)."""
        return self.role(look.role)


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
