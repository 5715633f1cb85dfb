"""The messages between the app and its screens and panes, and the rules they follow.

The app owns the refresh path, the key/command registry and navigation; screens and panes
(``widgets/``, ``screens/``, pure renderables in ``render/``) receive data and post intents.
This module holds the messages that cross between them and the protocols a screen or pane
implements, so a new pane starts here. Keep it small and additive.

Refresh path (one, owned by the app)
------------------------------------
The source calls back on foreign threads; :class:`~gputui.ui.app.GpuTuiApp` turns each call
into a message (:class:`SnapshotUpdated`, coalesced with ``can_replace`` so a newer snapshot
replaces an unprocessed older one; :class:`SourceStatusChanged`). The app stores the latest
snapshot in ``app.snapshot`` (it starts at ``EMPTY_SNAPSHOT``, never None) and calls
``show_snapshot(snapshot, now)`` on the *active* screen. A screen forwards to its widgets.
When a screen is resumed (mode switch back, modal dismissed) the app calls ``show_snapshot``
again with the latest snapshot, so a screen never needs to ask. ``now`` comes from the clock
injected into ``make_app(..., clock=...)``: use it for every age you print, never
``time.time()``, so snapshot tests are frozen.

Cost (5,000 nodes)
------------------
The main screen feeds ``show_snapshot`` only to the *visible* detail tab, and only when the
selected node's ``NodeView`` object changed (the builder reuses unchanged ones), the
ClusterPolicy view changed, or 5 s of app clock passed (ages). A hidden tab gets
``show_node`` + ``show_snapshot`` when it is shown. Every ``Static.update`` re-lays out the
screen, so skip redraws whose text would not change.

Node scope
----------
Widgets and screens that show one node implement ``show_node(node_name | None)``. On the main
screen the NodeTable cursor drives it (debounced); ``app.commands.jump_to(node, pane)`` drives it on
other screens (the upgrades and MIG screens select that node's row/card).

Where the app finds each view
-----------------------------
Full-screen views are the app's ``MODES`` (``view_modes(nodes=..., upgrades=..., ops=...)``),
detail tabs are ``nodes.detail_tabs()``; the pod log is pushed by ``app.open_pod_log`` and
receives :class:`PodLogLoaded` (it may post :class:`PodLogRequested` to reload); ``:ctx``
pushes ``ContextsScreen`` (``gputui.ui.context_switch``), whose ``enter`` posts
:class:`ContextSwitchRequested`. ``:timeline`` is handed the app's timeline through
:class:`TimelineView` (``gputui.ui.timeline_flow``); the node list's ``h`` reaches it as
``JumpRequested(node, Pane.TIMELINE)``.
Full screens subclass :class:`gputui.ui.screens.base.GpuScreen` (header on top, footer
below): yield widgets from ``compose_body()`` and implement :class:`ViewScreen` (a no-op with
a docstring where the view has no node or metrics); greyed actions come down as one value
(``show_blocks`` -> ``blocked_actions``). Detail tabs implement :class:`DetailPane` (listed
in ``nodes.detail_tabs``); a modal fed snapshots says ``@fulfils(SnapshotView)``. Each is
checked when registered (:func:`check_contract`: a misspelt method fails the import); the
app dispatches with ``isinstance`` on these protocols, never ``getattr``. Screens carry a CSS
class named after themselves (``upgrades-screen``, ``mig-screen``, ``pod-log-screen``) and
their stylesheet rules are prefixed with it. Colours come from theme variables only
(``$gpu-ok``, ``$gpu-warn``, ...); Rich ``Text`` takes symbols, words and roles from
:mod:`gputui.ui.render.style` and styles from the app's one :class:`Palette`
(``widget_palette(self)``), rebuilt on each theme change.

Asking the app for things (messages up, never direct calls into sources)
------------------------------------------------------------------------
* ``self.post_message(PodLogRequested(ns, pod, container))`` — open/reload a pod log (e.g.
  Enter on a pipeline stage). The app calls ``open_pod_log``.
* ``self.post_message(JumpRequested(node, pane))`` — go to a node and pane; ``pane`` is a
  :class:`~gputui.domain.pane.Pane` (``Finding.pane`` gives it).
* ``self.post_message(ActionRequested(action_id, targets))`` — run an action on nodes
  (the app prompts, plans and opens the confirmation dialog).
* ``self.app.post_message(CommandRequested(command_id))`` — run a registry command (the
  palette). Screens and widgets never call app methods and never read app attributes: what
  they show is pushed to them (``show_snapshot``, ``show_metrics``, constructor arguments),
  and what they want is a message. "Back" is a screen's own ``go_back()``.

Frozen data for tests and screenshots
-------------------------------------
``tests/fixtures/scenarios/<scenario>.json`` holds raw ``ClusterObjects`` recorded from the
emulated scenarios (``scripts/record_scenarios.py``) plus a few pod logs and the recorded
``now``: ``load_recording(scenario, SCENARIOS)`` (``tests.fixtures.recordings``) gives its
``snapshot()`` and ``ReplaySource.from_recording(rec)``, a source for
``make_app(Settings(), source, clock=lambda: rec.now)``; ``tests/ui/conftest.py`` has
``frozen_app(scenario)`` doing exactly that for Pilot and snapshot tests.

Messages
--------
Every message that crosses from one screen or layer to another (worker -> screen, screen ->
app, dialog -> app) is defined here, as a dataclass with typed fields (no ``Any``), compared
by identity and with Textual's empty repr (a log file gets no snapshot or pod log). A widget
telling only the screen that composes it (``NodeTable.NodeSelected``) nests its message in
the widget class; ``tests/ui/test_layering.py`` keeps both rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias, runtime_checkable

from textual.message import Message
from textual.message_pump import MessagePump

from gputui.actions.base import Action, Cancel, Plan, Progress, Result
from gputui.actions.operations import Operation
from gputui.actions.runner import DryRun
from gputui.domain.metrics import MetricsReading, MetricsWant
from gputui.domain.model import ClusterSnapshot
from gputui.domain.pane import Pane
from gputui.domain.timeline_event import TimelineEvent
from gputui.sources.base import SourceStatus
from gputui.ui.contract_check import ContractError, check_contract, fulfils
from gputui.ui.selection import SelectsNodes


#: action id -> why it is greyed (read-only, denied, no cluster): one value, handed down
ActionBlocks: TypeAlias = Mapping[str, str]


# ---------------------------------------------------------------------- what views implement
@runtime_checkable
class SnapshotView(Protocol):
    """Anything that renders the cluster snapshot (widgets and screens)."""

    def show_snapshot(self, snapshot: ClusterSnapshot, now: float) -> None:
        """Render ``snapshot``; ``now`` is the app's (injectable) clock in epoch seconds."""


@runtime_checkable
class NodeScoped(Protocol):
    """Widgets/screens that show one node: the NodeTable cursor or a jump selects it."""

    def show_node(self, node_name: str | None) -> None:
        """Show ``node_name`` (None: nothing selected); data comes from the last snapshot."""


@runtime_checkable
class MetricsView(Protocol):
    """Views that show the metrics feed's latest reading."""

    def show_metrics(self, reading: MetricsReading, now: float) -> None:
        """Take ``reading`` (``now`` as in :meth:`SnapshotView.show_snapshot`)."""


@runtime_checkable
class ActionGate(Protocol):
    """Views whose keys run actions: they grey the ones the app says are blocked."""

    def show_blocks(self, blocks: ActionBlocks) -> None:
        """Take the greyed actions (every one of them, each time)."""


@runtime_checkable
class ViewScreen(SelectsNodes, SnapshotView, NodeScoped, MetricsView, ActionGate, Protocol):
    """A view (a Textual mode: nodes, findings, upgrades, mig): all the app feeds it, and
    the selection its actions act on (``SelectsNodes`` first: it is checked last)."""

    def go_back(self) -> bool:
        """``esc`` on this view: undo its own state (a filter, marks); True if it did."""


@runtime_checkable
class TimelineView(Protocol):
    """``:timeline``: the app hands it the incident timeline (:mod:`gputui.ui.timeline_flow`)."""

    def show_timeline(self, events: Sequence[TimelineEvent], since: float | None,
                      dropped: int, now: float) -> None:
        """Every event kept, newest first; ``since``: when watching began (None: not yet);
        ``dropped``: how many of the oldest went over the store's cap."""


@runtime_checkable
class DetailPane(SnapshotView, NodeScoped, MetricsView, Protocol):
    """A detail tab under the node list: the nodes screen feeds it all three."""


@runtime_checkable
class CommandHost(Protocol):
    """What the palette reads from the app: the user's key remaps and the greyed actions
    with their reasons (Textual hands a palette provider only the app)."""

    keymap: dict[str, str]

    def action_blocks(self) -> ActionBlocks:
        """action id -> why it is greyed."""
        ...


# ---------------------------------------------------------------------- the refresh path
@dataclass(eq=False, repr=False)
class SnapshotUpdated(Message):
    """A new snapshot arrived from the source (posted from the source's thread).

    A newer one replaces an older one still waiting in the queue, so a slow terminal shows
    the latest cluster, not a backlog.
    """

    snapshot: ClusterSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotUpdated)


@dataclass(eq=False, repr=False)
class SourceStatusChanged(Message):
    """The source's connection state changed."""

    status: SourceStatus

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SourceStatusChanged)


@dataclass(eq=False, repr=False)
class MetricsUpdated(Message):
    """A metrics reading arrived (posted from the metrics feed's thread); a newer one
    replaces an unprocessed older one."""

    reading: MetricsReading

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsUpdated)


@dataclass(eq=False, repr=False)
class TimelineRecorded(Message):
    """``gputui replay``: the recorded timeline up to the cursor (posted from the replay's
    thread, bad entries already skipped); a newer one replaces an unprocessed older one."""

    events: tuple[TimelineEvent, ...]

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TimelineRecorded)


@dataclass(eq=False, repr=False)
class MetricsWanted(Message):
    """What is on screen changed (selected node, visible rows, their exporter pods): the
    app tells the metrics feed (never blocks); only the newest matters."""

    want: MetricsWant

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsWanted)


# ---------------------------------------------------------------------- intents, up to the app
@dataclass(eq=False, repr=False)
class JumpRequested(Message):
    """Go to ``node`` (or none) and show ``pane``."""

    node: str | None
    pane: Pane


@dataclass(eq=False, repr=False)
class CommandRequested(Message):
    """Run a registry command by id (the palette picked it)."""

    command_id: str


@dataclass(eq=False, repr=False)
class ContextSwitchRequested(Message):
    """Show the cluster of kubeconfig context ``context`` (``enter`` in ``:ctx``); the name
    exactly as the kubeconfig spells it."""

    context: str


@dataclass(eq=False, repr=False)
class PodLogRequested(Message):
    """Open (or reload) the log and events of one pod's container.

    ``pod_namespace``, not ``namespace``: ``Message.namespace`` is Textual's class-level
    prefix for handler names."""

    pod_namespace: str
    pod: str
    container: str | None = None


@dataclass(frozen=True)
class PodLog:
    """What a pod log read returned; ``error`` is one line when the read failed.

    ``events`` are reduced Kubernetes Event objects as the server sent them: every value is
    read and checked by the renderer (``object``, not a trusted shape)."""

    namespace: str
    pod: str
    container: str | None
    lines: tuple[str, ...] = ()
    events: tuple[Mapping[str, object], ...] = field(default=())
    error: str = ""


@dataclass(eq=False, repr=False)
class PodLogLoaded(Message):
    """A pod log/events read finished (posted to the PodLogScreen by the app's worker)."""

    log: PodLog


@dataclass(eq=False, repr=False)
class SummaryCopyRequested(Message):
    """The operator confirmed the handoff summary shown: copy ``markdown`` to the
    clipboard (OSC 52), or to a private file when the terminal cannot take it."""

    markdown: str


# ---------------------------------------------------------------------- actions
@dataclass(eq=False, repr=False)
class ActionRequested(Message):
    """A screen asks for action ``action_id`` on ``targets`` (node names)."""

    action_id: str
    targets: tuple[str, ...]


@dataclass(eq=False, repr=False)
class ApplyRequested(Message):
    """The operator confirmed ``plan`` (after a clean dry run) in ``dialog``; ``cancel``
    stops it later. Progress and the result go back to ``dialog`` as messages."""

    plan: Plan
    dry_run: DryRun
    cancel: Cancel
    dialog: MessagePump
    action: Action | None = None


@dataclass(eq=False, repr=False)
class DryRunFinished(Message):
    """The server's answer to the plan sent with ``dryRun=All``."""

    dry_run: DryRun


@dataclass(eq=False, repr=False)
class DryRunProgressed(Message):
    """``done`` of ``total`` writes answered so far (a newer one replaces an older one)."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DryRunProgressed)


@dataclass(eq=False, repr=False)
class ActionProgressed(Message):
    """A running apply's latest progress (a newer one replaces an unprocessed older one)."""

    progress: Progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ActionProgressed)


@dataclass(eq=False, repr=False)
class ActionCompleted(Message):
    """The apply ended (done, failed or stopped)."""

    result: Result


@dataclass(eq=False, repr=False)
class OperationChanged(Message):
    """An operation started, progressed, was asked to stop or ended (from any thread)."""

    operation: Operation

    def can_replace(self, message: Message) -> bool:
        """A newer change of the same operation replaces one not yet handled."""
        return (isinstance(message, OperationChanged)
                and message.operation.id == self.operation.id)


@dataclass(eq=False, repr=False)
class OperationOpenRequested(Message):
    """``:ops``: reopen the live progress of operation ``op_id``."""

    op_id: str


@dataclass(eq=False, repr=False)
class OperationStopRequested(Message):
    """``:ops``: stop operation ``op_id`` (the app asks the operator first)."""

    op_id: str


__all__ = [
    "ActionBlocks", "ActionCompleted", "ActionGate", "ActionProgressed",
    "ActionRequested", "ApplyRequested", "CommandHost", "CommandRequested", "ContextSwitchRequested",
    "ContractError",
    "DetailPane", "DryRunFinished", "DryRunProgressed", "JumpRequested", "MetricsUpdated",
    "MetricsView", "MetricsWanted", "NodeScoped", "OperationChanged",
    "OperationOpenRequested", "OperationStopRequested", "PodLog", "PodLogLoaded", "PodLogRequested",
    "SnapshotUpdated", "SnapshotView", "SourceStatusChanged", "SummaryCopyRequested",
    "TimelineView", "ViewScreen", "check_contract",
    "fulfils"
]
