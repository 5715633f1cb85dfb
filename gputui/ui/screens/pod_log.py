"""``PodLogScreen``: one pod container's recent log lines and the pod's events.

The screen does no IO: the app's thread worker reads ``source.pod_log`` and
``source.pod_events`` and posts :class:`~gputui.ui.contracts.PodLogLoaded` to it. Until then
it says it is loading; a failed read becomes one clear line, never a traceback. Switching
container (``c``) or reloading (``r``) posts :class:`~gputui.ui.contracts.PodLogRequested`,
the same intent that opened it, so there is still exactly one reader.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from gputui.domain.model import ClusterSnapshot
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import PodLog, PodLogLoaded, PodLogRequested, SnapshotView, fulfils
from gputui.ui.render.pod_log import heading, render_events, status_line
from gputui.ui.widgets.log_view import LogView
from gputui.ui.widgets.palette_mixin import widget_palette


def containers_of(snapshot: ClusterSnapshot, pod: str,
                  current: str | None) -> tuple[str | None, ...]:
    """Containers known for ``pod`` from its pipeline stage: the pod's default container
    (None) and each init container; the current one always included."""
    names: list[str | None] = [None]
    for node in snapshot.nodes.values():
        for stage in node.pipeline.stages:
            if stage.pod == pod:
                names += [sub.name for sub in stage.substages]
                if stage.container:
                    names.append(stage.container)
    if current is not None:
        names.append(current)
    return tuple(dict.fromkeys(names))


@fulfils(SnapshotView)
class PodLogScreen(ModalScreen[None]):
    """Log tail and events of one pod; ``esc`` closes it."""

    DEFAULT_CLASSES = "pod-log-screen"

    BINDINGS: ClassVar[list[BindingType]] = bindings_for("pod_log")

    def __init__(self, namespace: str, pod: str, container: str | None = None) -> None:
        super().__init__()
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.loading_log = True
        self.result: PodLog | None = None
        self._now = 0.0
        self._containers: tuple[str | None, ...] = (container,)

    def compose(self) -> ComposeResult:
        with Vertical(id="pod-log-dialog"):
            yield Static(id="pod-log-heading")
            yield Static(id="pod-log-status")
            yield LogView(id="pod-log-lines")
            yield Input(placeholder="find in the log (enter; esc cancels)", id="pod-log-search")
            yield Static("events", id="pod-log-events-title")
            with VerticalScroll(id="pod-log-events"):
                yield Static(id="pod-log-events-body")

    def on_mount(self) -> None:
        self.search_box.display = False
        self.lines.focus()

    @property
    def lines(self) -> LogView:
        """The log lines."""
        return self.query_one("#pod-log-lines", LogView)

    @property
    def search_box(self) -> Input:
        """The search field, shown by ``/``."""
        return self.query_one("#pod-log-search", Input)

    # --- the contract -------------------------------------------------------------------

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Keep the clock (for event ages) and the pod's container list current."""
        self._now = now
        self._containers = containers_of(snapshot, self.pod, self.container)
        self._draw()

    def on_pod_log_loaded(self, message: PodLogLoaded) -> None:
        """The app's worker finished a read: show it (if it is for what we show now)."""
        log = message.log
        if log.pod != self.pod or log.container != self.container:
            return
        message.stop()
        self.result = log
        self.loading_log = False
        self.lines.set_lines(log.lines)
        self._draw()

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        palette = widget_palette(self)
        result = self.result
        self.query_one("#pod-log-heading", Static).update(
            heading(self.namespace, self.pod, self.container, self._containers, palette))
        view = self.lines
        self.query_one("#pod-log-status", Static).update(status_line(
            self.loading_log, result.error if result else "",
            len(result.lines) if result else 0, self.container, palette, wrap=view.wrap,
            search=(view.query_text, view.match_index, len(view.matches))))
        events = render_events(result.events, self._now, palette) if result else ""
        self.query_one("#pod-log-events-body", Static).update(events)

    # --- keys ----------------------------------------------------------------------------

    def _request(self) -> None:
        self.loading_log = True
        self.result = None
        self.lines.set_lines(())
        self._draw()
        self.post_message(PodLogRequested(self.namespace, self.pod, self.container))

    def action_close(self) -> None:
        """Close the search field when it is open, else the pod log."""
        if self.search_box.display:
            self._close_search()
            return
        self.dismiss(None)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or let them run off to the right."""
        self.lines.set_wrap(not self.lines.wrap)
        self._draw()

    def action_log_home(self) -> None:
        self.lines.scroll_home(animate=False, immediate=True)

    def action_log_end(self) -> None:
        self.lines.scroll_end(animate=False, immediate=True)

    def action_search(self) -> None:
        """Open the search field."""
        box = self.search_box
        box.value = self.lines.query_text
        box.display = True
        box.focus()

    def action_next_match(self) -> None:
        if self.lines.next_match() is None:
            self.notify("No search, or no match: / finds text.", severity="information")
        self._draw()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """Find the text typed (an empty search clears the highlight)."""
        if message.input.id != "pod-log-search":
            return
        message.stop()
        self._close_search()
        self.lines.search(message.value.strip())
        self._draw()

    def _close_search(self) -> None:
        self.search_box.display = False
        self.lines.focus()

    def action_reload(self) -> None:
        """Read the same container again."""
        self._request()

    def action_next_container(self) -> None:
        """Cycle through the pod's containers and read the next one."""
        if len(self._containers) < 2:
            self.notify("This pod has no other container known.", severity="information")
            return
        index = self._containers.index(self.container) if self.container in self._containers \
            else -1
        self.container = self._containers[(index + 1) % len(self._containers)]
        self._request()
