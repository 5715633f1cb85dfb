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
from textual.widgets import Log, Static

from gputui.domain.model import ClusterSnapshot
from gputui.ui.commands import bindings_for
from gputui.ui.contracts import PodLog, PodLogLoaded, PodLogRequested, SnapshotView, fulfils
from gputui.ui.render.pod_log import heading, render_events, status_line
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
            yield Log(id="pod-log-lines", highlight=False, auto_scroll=True)
            yield Static("events", id="pod-log-events-title")
            with VerticalScroll(id="pod-log-events"):
                yield Static(id="pod-log-events-body")

    def on_mount(self) -> None:
        self.query_one("#pod-log-lines", Log).focus()

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
        widget = self.query_one("#pod-log-lines", Log)
        widget.clear()
        widget.write_lines(log.lines)
        self._draw()

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        palette = widget_palette(self)
        result = self.result
        self.query_one("#pod-log-heading", Static).update(
            heading(self.namespace, self.pod, self.container, self._containers, palette))
        self.query_one("#pod-log-status", Static).update(status_line(
            self.loading_log, result.error if result else "",
            len(result.lines) if result else 0, self.container, palette))
        events = render_events(result.events, self._now, palette) if result else ""
        self.query_one("#pod-log-events-body", Static).update(events)

    # --- keys ----------------------------------------------------------------------------

    def _request(self) -> None:
        self.loading_log = True
        self.result = None
        self.query_one("#pod-log-lines", Log).clear()
        self._draw()
        self.post_message(PodLogRequested(self.namespace, self.pod, self.container))

    def action_close(self) -> None:
        self.dismiss(None)

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
