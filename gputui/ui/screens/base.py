"""``GpuScreen``: the frame every full screen shares (status header on top, footer below).

Why a base class: the header must say on every view whether the data is live and how old it
is (JOURNEYS "Always"), and the app keeps it current without knowing each screen's layout.
Subclasses yield their widgets from :meth:`compose_body` and implement ``show_snapshot`` (and
``show_node`` when they show one node); the app calls both (see ``gputui.ui.contracts``).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from gputui.domain.model import ClusterSnapshot
from gputui.ui.widgets.status_header import StatusHeader


class GpuScreen(Screen[None]):
    """A full screen with the status header and the key footer.

    Class attributes:
        VIEW: the mode name this screen is shown under (``nodes``, ``upgrades``...); the
            footer's view keys and ``esc`` use it.
    """

    VIEW: str = ""

    def compose(self) -> Iterable[Widget]:
        yield StatusHeader(id="status-header")
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> Iterable[Widget]:
        """The screen's own widgets, between header and footer."""
        return ()

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Render ``snapshot``; override and forward to your widgets."""

    def show_node(self, node_name: str | None) -> None:
        """Select ``node_name`` (a jump from another view); override where meaningful."""

    def go_back(self) -> bool:
        """``esc`` on this screen: undo its own state (a filter, marks); True if it did.

        The app asks before leaving the view, so each screen owns what "back" means."""
        return False
