"""``GpuScreen``: the frame every full screen shares (status header on top, footer below).

Why a base class: the header must say on every view whether the data is live and how old it
is (JOURNEYS "Always"), and the app keeps it current without knowing each screen's layout.
Subclasses yield their widgets from :meth:`compose_body` and implement the
:class:`~gputui.ui.contracts.ViewScreen` methods the app calls (see ``gputui.ui.contracts``);
each subclass is checked against that contract when it is created, so a misspelt method is
an error at import instead of a view the app silently never feeds.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, final

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.domain.pane import Pane
from gputui.ui.contracts import ActionBlocks, ContractError, ViewScreen, check_contract
from gputui.ui.selection import Selection
from gputui.ui.widgets.status_header import StatusHeader


class GpuScreen(Screen[None]):
    """A full screen with the status header and the key footer.

    Class attributes:
        VIEW: the mode name this screen is shown under (``nodes``, ``upgrades``...); the
            footer's view keys and ``esc`` use it.

    The ``show_*`` methods are abstract (mypy rejects registering a subclass that lacks one,
    :func:`check_contract` rejects defining it); Textual's metaclass is not ``ABCMeta``.
    """

    VIEW: str = ""

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        #: action id -> why greyed; handed down by the app (:meth:`show_blocks`)
        self.blocked_actions: ActionBlocks = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_contract(cls, ViewScreen)

    def compose(self) -> Iterable[Widget]:
        yield StatusHeader(id="status-header")
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> Iterable[Widget]:
        """The screen's own widgets, between header and footer."""
        return ()

    @abstractmethod
    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Render ``snapshot``; forward to your widgets."""

    @abstractmethod
    def show_node(self, node_name: str | None) -> None:
        """Select ``node_name`` (a jump from another view)."""

    @abstractmethod
    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Take the metrics feed's latest reading."""

    @abstractmethod
    def selected_nodes(self) -> Selection:
        """The nodes an action started in this view acts on (its marks or its cursor), or
        why there are none: the one source of every action's targets."""

    @final
    def show_blocks(self, blocks: ActionBlocks) -> None:
        """The greyed actions (read-only, denied, no cluster); ``check_action`` reads them."""
        self.blocked_actions = blocks

    def go_back(self) -> bool:
        """``esc`` on this screen: undo its own state (a filter, marks); True if it did.

        The app asks before leaving the view, so each screen owns what "back" means."""
        return False


def view_modes(**views: type[GpuScreen]) -> dict[str, str | Callable[[], Screen[Any]]]:
    """The app's ``MODES``, registered through the contract.

    Why a function and not a dict literal: a view class that lacks one of the abstract
    ``show_*`` methods (a misspelt override) is abstract, and mypy rejects an abstract class
    given where ``type[GpuScreen]`` is expected; the class itself already failed
    :func:`~gputui.ui.contracts.check_contract` when it was created.
    """
    return {name: view for name, view in views.items()}


#: where ``app.commands.jump_to`` shows each pane: (the view, the detail tab or None); every
#: :class:`~gputui.domain.pane.Pane` has one (checked here, at import)
PANE_TARGETS: Mapping[str, tuple[str, str | None]] = MappingProxyType({
    Pane.NODES: ("nodes", None), Pane.PIPELINE: ("nodes", "pipeline"),
    Pane.NODE: ("nodes", "node"), Pane.METRICS: ("nodes", "metrics"),
    Pane.UPGRADE: ("upgrades", None), Pane.MIG: ("mig", None),
    Pane.FINDINGS: ("findings", None), Pane.TIMELINE: ("timeline", None)})
if set(PANE_TARGETS) != set(Pane):
    raise ContractError(f"PANE_TARGETS lacks {sorted(set(Pane) - set(PANE_TARGETS))}")
