"""``SummaryScreen`` (``:summary``, ``s`` on the findings view): the handoff summary, for review.

The Markdown is shown as it will be pasted (escapes and all), so what the operator reviews
is exactly what ``y`` copies. It is built once, when the screen opens, and not redrawn by
later snapshots: a summary that changed between reading and copying would hand over
something nobody read. ``y`` asks the app to copy it (:class:`SummaryCopyRequested`);
the app says in one line where it went (the clipboard through OSC 52, or a private file).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from gputui.domain.metrics import MetricsReading
from gputui.domain.model import ClusterSnapshot
from gputui.ui.commands import bindings_for, command, key_label
from gputui.ui.contracts import SummaryCopyRequested
from gputui.ui.screens.base import GpuScreen
from gputui.ui.selection import Selection


class SummaryScreen(GpuScreen):
    """The summary's Markdown, scrollable; ``y`` copies it, ``esc`` closes."""

    VIEW = "summary"
    DEFAULT_CLASSES = "summary-screen"
    BINDINGS = bindings_for("summary")

    def __init__(self, markdown: str, copy_keys: str | None = None) -> None:
        """``copy_keys``: the keys ``summary.copy`` answers to after the user's remaps."""
        super().__init__()
        #: the document shown and copied
        self.markdown = markdown
        self._copy_keys = copy_keys or command("summary.copy").keys

    def compose_body(self) -> Iterable[Widget]:
        copy = key_label(self._copy_keys)
        yield Static(f"Handoff summary (Markdown). {copy}: copy to the clipboard   "
                     "esc: close", id="summary-title")
        with VerticalScroll(id="summary-body"):
            yield Static(Text(self.markdown), id="summary-text")

    def on_mount(self) -> None:
        self.query_one("#summary-body").focus()

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Nothing: the summary is frozen when opened (what is reviewed is what is copied)."""

    def show_node(self, node_name: str | None) -> None:
        """Nothing: the summary covers every node."""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Nothing: the summary is built from the snapshot and the audit log."""

    def selected_nodes(self) -> Selection:
        """None: the summary is a document about every node."""
        return Selection(why_none="the handoff summary selects no node (esc, then choose "
                                  "one in a view)")

    def action_copy(self) -> None:
        self.post_message(SummaryCopyRequested(self.markdown))

    def action_close(self) -> None:
        self.dismiss()

