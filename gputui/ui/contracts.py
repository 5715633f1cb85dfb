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
screen the NodeTable cursor drives it (debounced); ``app.jump_to(node, pane)`` drives it on
other screens (the upgrades and MIG screens select that node's row/card).

Where the app finds each view
-----------------------------
* ``gputui.ui.widgets.pipeline.PipelinePane``   -> main screen tab ``pipeline``
* ``gputui.ui.widgets.node_detail.NodeDetail``  -> main screen tab ``node``
* ``gputui.ui.widgets.metrics_pane.MetricsPane`` -> main screen tab ``metrics``
* ``gputui.ui.screens.upgrades.UpgradesScreen``  -> mode ``upgrades`` (``:upgrades``, key 2)
* ``gputui.ui.screens.mig.MigScreen``            -> mode ``mig`` (``:mig``, key 3)
* ``gputui.ui.screens.pod_log.PodLogScreen(namespace, pod, container)`` -> pushed by
  ``app.open_pod_log``; it receives :class:`PodLogLoaded` (posted to the screen itself by the
  app's thread worker) and may post :class:`PodLogRequested` to reload.

Full screens subclass :class:`gputui.ui.screens.base.GpuScreen` (status header on top,
footer below, the app keeps the header current): yield your widgets from ``compose_body()``
and override ``show_snapshot`` / ``show_node``. A ``ModalScreen`` (the pod log may be one) is
fine too. All of them take no required constructor arguments (except PodLogScreen), implement
:class:`SnapshotView` (and :class:`NodeScoped` where they show one node). Screens carry a CSS
class named after themselves (``upgrades-screen``, ``mig-screen``, ``pod-log-screen``) and
their stylesheet rules are prefixed with it. Colours come from theme variables only:
``$gpu-ok $gpu-warn $gpu-crit $gpu-info $gpu-paused $gpu-muted $gpu-progress
$gpu-unknown``. For Rich
``Text`` (DataTable cells, renderables) take symbols, words and roles from
:mod:`gputui.ui.render.style` and styles from the app's one :class:`Palette`
(``widget_palette(self)``), rebuilt from the active theme's variables on each theme change.

Asking the app for things (messages up, never direct calls into sources)
------------------------------------------------------------------------
* ``self.post_message(PodLogRequested(ns, pod, container))`` — open/reload a pod log (e.g.
  Enter on a pipeline stage). The app calls ``open_pod_log``.
* ``self.post_message(JumpRequested(node, pane))`` — go to a node and pane; ``pane`` is one of
  :data:`PANES` (``Finding.pane`` gives it).
* ``self.app.post_message(CommandRequested(command_id))`` — run a registry command (the
  palette). Screens and widgets never call app methods and never read app attributes: what
  they show is pushed to them (``show_snapshot``, ``show_metrics``, constructor arguments),
  and what they want is a message. "Back" is a screen's own ``go_back()``.

Frozen data for tests and screenshots
-------------------------------------
``tests/fixtures/scenarios/<scenario>.json`` holds raw ``ClusterObjects`` recorded from the
emulated scenarios (``scripts/record_scenarios.py``) plus a few pod logs and the recorded
``now``. Load them headless::

    from gputui.sources.replay import load_recording, ReplaySource
    from tests.fixtures import SCENARIOS
    rec = load_recording("upgrade-rolling", SCENARIOS)  # Recording(objects, now, logs, events)
    snapshot = rec.snapshot()                      # SnapshotBuilder().build(objects, rec.now)
    source = ReplaySource.from_recording(rec)      # a ClusterSource for make_app

and a Pilot/snapshot test::

    from gputui.ui.app import make_app
    app = make_app(Settings(), source, clock=lambda: rec.now)
    async with app.run_test(size=(120, 40)) as pilot: ...

``tests/ui/conftest.py`` has ``frozen_app(scenario)`` doing exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

from textual.message import Message

from gputui.domain.model import ClusterSnapshot

#: The panes ``app.jump_to`` understands (``Finding.pane`` values plus ``findings``).
PANES: Final = ("nodes", "pipeline", "upgrade", "mig", "metrics", "findings")


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


class SnapshotUpdated(Message):
    """A new snapshot arrived from the source (posted from the source's thread).

    A newer one replaces an older one still waiting in the queue, so a slow terminal shows
    the latest cluster, not a backlog.
    """

    def __init__(self, snapshot: ClusterSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotUpdated)


class SourceStatusChanged(Message):
    """The source's connection state changed (``gputui.sources.base.SourceStatus``)."""

    def __init__(self, status: Any) -> None:
        super().__init__()
        self.status = status

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SourceStatusChanged)


class MetricsUpdated(Message):
    """A metrics reading arrived (``gputui.domain.metrics.MetricsReading``, posted from the
    metrics feed's thread); a newer one replaces an unprocessed older one."""

    def __init__(self, reading: Any) -> None:
        super().__init__()
        self.reading = reading

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsUpdated)


class MetricsWanted(Message):
    """What is on screen changed: the app tells the metrics feed (never blocks).

    ``want`` is a ``gputui.sources.metrics.MetricsWant`` (selected node, visible rows,
    their exporter pods); only the newest matters.
    """

    def __init__(self, want: Any) -> None:
        super().__init__()
        self.want = want

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsWanted)


class JumpRequested(Message):
    """Go to ``node`` (or none) and show ``pane`` (one of :data:`PANES`)."""

    def __init__(self, node: str | None, pane: str) -> None:
        super().__init__()
        self.node = node
        self.pane = pane


class CommandRequested(Message):
    """Run a registry command by id (the palette picked it)."""

    def __init__(self, command_id: str) -> None:
        super().__init__()
        self.command_id = command_id


@runtime_checkable
class CommandHost(Protocol):
    """What the palette reads from the app: the user's key remaps and the greyed actions
    with their reasons (Textual hands a palette provider only the app)."""

    keymap: dict[str, str]

    def action_blocks(self) -> Mapping[str, str]:
        """action id -> why it is greyed."""
        ...


class PodLogRequested(Message):
    """Open (or reload) the log and events of one pod's container."""

    def __init__(self, namespace: str, pod: str, container: str | None = None) -> None:
        super().__init__()
        # Message.namespace is a class-level prefix for handler names, read only when the
        # class is created; an instance attribute of the same name does not touch it.
        self.namespace = namespace  # type: ignore[misc]
        self.pod = pod
        self.container = container


@dataclass(frozen=True)
class PodLog:
    """What a pod log read returned; ``error`` is one line when the read failed."""

    namespace: str
    pod: str
    container: str | None
    lines: tuple[str, ...] = ()
    events: tuple[dict[str, Any], ...] = field(default=())
    error: str = ""


class PodLogLoaded(Message):
    """A pod log/events read finished (posted to the PodLogScreen by the app's worker)."""

    def __init__(self, log: PodLog) -> None:
        super().__init__()
        self.log = log


__all__ = [
    "PANES",
    "JumpRequested",
    "MetricsUpdated",
    "MetricsWanted",
    "NodeScoped",
    "PodLog",
    "PodLogLoaded",
    "PodLogRequested",
    "SnapshotUpdated",
    "SnapshotView",
    "SourceStatusChanged",
]
