"""A small host app for the detail panes: the contract's side of the shell, nothing more.

It keeps ``snapshot``, calls ``show_snapshot``/``show_node`` the way the shell does, records
the intents the panes post (:class:`JumpRequested`, :class:`PodLogRequested`) and answers a
pod log request like the shell's worker would, from a fake source with known lines.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.ui.contracts import (
    JumpRequested,
    NodeScoped,
    PodLog,
    PodLogLoaded,
    PodLogRequested,
    SnapshotView,
)
from gputui.ui.render.style import PLAIN, Palette
from gputui.ui.screens.pod_log import PodLogScreen
from gputui.ui.theme import GPUTUI_THEME, gpu_variables, theme_palette
from tests.ui.panes.data import NOW

STYLES = ["../../../styles/detail.tcss", "../../../styles/upgrades.tcss",
          "../../../styles/mig.tcss", "../../../styles/pod_log.tcss"]


class FakeSource:
    """Known log lines and events per (pod, container); ``fail`` makes reads raise."""

    def __init__(self, lines: dict[tuple[str, str | None], list[str]] | None = None,
                 events: list[dict[str, Any]] | None = None, fail: str = "") -> None:
        self.lines = lines or {}
        self.events = events or []
        self.fail = fail
        self.reads: list[tuple[str, str, str | None]] = []

    def pod_log(self, namespace: str, pod: str, container: str | None = None,
                tail_lines: int = 200) -> list[str]:
        self.reads.append((namespace, pod, container))
        if self.fail:
            raise RuntimeError(self.fail)
        return self.lines.get((pod, container), [])

    def pod_events(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        return list(self.events)


class HostApp(App[None]):
    """Mounts one widget (or pushes one screen) and plays the shell's part of the contract."""

    CSS_PATH = STYLES
    #: the shell's status header is theirs to picture; hiding it keeps these screenshots
    #: about the panes only (the shell's own snapshot suite covers the header)
    CSS = "StatusHeader { display: none; }"
    #: the theme's role palette, handed down as the shell's app does
    palette: Palette = PLAIN

    def __init__(self, snapshot: ClusterSnapshot = EMPTY_SNAPSHOT, *,
                 widget: Widget | None = None, screen: Screen[Any] | None = None,
                 node: str | None = None, source: FakeSource | None = None,
                 now: float = NOW) -> None:
        super().__init__()
        self.register_theme(GPUTUI_THEME)
        self.theme = "gputui"
        self.snapshot = snapshot
        self.now = now
        self.clock = lambda: self.now
        self._widget = widget
        self._screen = screen
        self._node = node
        self.source = source or FakeSource()
        self.jumps: list[tuple[str | None, str]] = []
        self.log_requests: list[tuple[str, str, str | None]] = []

    def compose(self) -> ComposeResult:
        if self._widget is not None:
            yield self._widget

    def get_css_variables(self) -> dict[str, str]:
        """Theme variables plus ``$gpu-*`` fallbacks, and the palette, as the shell's app
        does."""
        variables = super().get_css_variables()
        variables = {**variables, **gpu_variables(variables)}
        self.palette = theme_palette(variables)
        return variables

    def on_mount(self) -> None:
        # as the shell does: a screen that becomes active is given the latest snapshot
        self.screen_change_signal.subscribe(
            self, lambda _: self.call_after_refresh(self.deliver, self.snapshot))
        if self._screen is not None:
            self.push_screen(self._screen)
        self.call_after_refresh(self.deliver, self.snapshot)

    def deliver(self, snapshot: ClusterSnapshot, now: float | None = None) -> None:
        """What the shell does on SnapshotUpdated: store it, show it on the active views."""
        self.snapshot = snapshot
        self.now = now if now is not None else self.now
        for view in self._views():
            view.show_snapshot(snapshot, self.now)
            if self._node is not None and isinstance(view, NodeScoped):
                view.show_node(self._node)

    def _views(self) -> list[SnapshotView]:
        """The active screen when it takes snapshots, and the mounted pane (which must)."""
        views: list[SnapshotView] = [self.screen] if isinstance(self.screen, SnapshotView) \
            else []
        if self._widget is not None:
            assert isinstance(self._widget, SnapshotView), type(self._widget)
            views.append(self._widget)
        return views

    def jump_to(self, node: str | None, pane: str) -> None:
        self.jumps.append((node, pane))

    def on_jump_requested(self, message: JumpRequested) -> None:
        self.jump_to(message.node, message.pane)

    def on_pod_log_requested(self, message: PodLogRequested) -> None:
        self.log_requests.append((message.pod_namespace, message.pod, message.container))
        top = self.screen
        if not (isinstance(top, PodLogScreen) and top.pod == message.pod):
            top = PodLogScreen(message.pod_namespace, message.pod, message.container)
            self.push_screen(top)
        self._read(top, message)

    def _read(self, screen: PodLogScreen, message: PodLogRequested) -> None:
        try:
            lines = self.source.pod_log(message.pod_namespace, message.pod, message.container)
            log = PodLog(message.pod_namespace, message.pod, message.container, tuple(lines),
                         tuple(self.source.pod_events(message.pod_namespace, message.pod)))
        except Exception as error:  # noqa: BLE001 - shown as the screen's error line
            log = PodLog(message.pod_namespace, message.pod, message.container, error=str(error))
        screen.post_message(PodLogLoaded(log))
