"""The app's views, one Textual *mode* each (number keys and ``:`` names switch between them).

Each mode keeps its own screen and state; the app hands a screen the newest snapshot when it
becomes the one shown (:mod:`gputui.ui.screen_feed`). Kept apart from the app so the list of
views is found by its name and the app does not import every screen.
"""

from __future__ import annotations

from gputui.ui.screens.base import view_modes
from gputui.ui.screens.findings import FindingsScreen
from gputui.ui.screens.joins import JoinsScreen
from gputui.ui.screens.mig import MigScreen
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.screens.operations import OperationsScreen
from gputui.ui.screens.timeline import TimelineScreen
from gputui.ui.screens.upgrades import UpgradesScreen

#: mode name -> its screen class (the app's ``MODES``)
VIEWS = view_modes(nodes=NodesScreen, findings=FindingsScreen, upgrades=UpgradesScreen,
                   mig=MigScreen, joins=JoinsScreen, ops=OperationsScreen,
                   timeline=TimelineScreen)
