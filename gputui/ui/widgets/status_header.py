"""``StatusHeader``: two lines that say which cluster, whether the data is live, and how bad.

Line 1: context and server, connection state and data age (or "stale since 14:02:11").
Line 2: ClusterPolicy state (and the states not ready), GPU nodes, GPUs allocatable/total
(with the MIG devices among them, as the fleet line counts them), nodes with findings, upgrades in progress. It must fit 80 columns, so parts are dropped from
the right (the server first) rather than wrapped; the rendering is a plain function so tests
can call it without an app. While operations run, one more line counts them and says what
the newest does now (``⟳ 1 running: drain svxj 3/5 evicted, 1 refused by budget ...``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

from gputui.actions.operations import Operation
from gputui.domain.metrics import FleetMetrics
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot
from gputui.domain.readgaps import METRICS, ReadGap
from gputui.domain.timefmt import duration
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.render.fleet import fleet_line
from gputui.ui.render.operations import running_line
from gputui.ui.render.style import PLAIN, Palette
from gputui.ui.widgets.palette_mixin import widget_palette
from gputui.ui.widgets.status_header_replay import replay_line

INITIAL_STATUS = SourceStatus(Connection.CONNECTING)


def clock_text(epoch: float) -> str:
    """``14:02:11`` in local time (what the operator's wall clock says)."""
    return time.strftime("%H:%M:%S", time.localtime(epoch))


@dataclass(frozen=True)
class HeaderState:
    """Everything the header renders."""

    snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
    status: SourceStatus = INITIAL_STATUS
    now: float = 0.0
    #: the metrics fleet line's figures; None until a metrics source answers (no line)
    fleet: FleetMetrics | None = None
    #: operations running now, newest first (a line while there are any)
    running: tuple[Operation, ...] = ()
    #: no write can be sent (``--read-only`` or a ``read_only_contexts`` match)
    read_only: bool = False
    #: this session is being recorded (``--record``/``record:``), until ``:ctx`` ends it
    recording: bool = False
    #: the recording stopped (a write failed: a full disk): the operator must not believe
    #: the incident is being recorded
    recording_stopped: bool = False


def connection_part(state: HeaderState) -> tuple[str, str]:
    """(text, colour role) of the live/stale part.

    Live data says the time it is "as of" (the snapshot's clock time, emulated in demo mode)
    rather than an age, because watches keep it current without an update to count from.
    """
    status, now = state.status, state.now
    connection = status.connection
    as_of = state.snapshot.generated_at or status.last_update
    # until the screen's snapshot has every list, it is loading, not live: actions wait
    # for that too, so "live" is when a key press acts
    loading = state.snapshot is not EMPTY_SNAPSHOT and bool(state.snapshot.loading)
    if loading and connection in (Connection.CONNECTING, Connection.LIVE) and (
            not status.stale_since):
        return "◌ loading…" + (f" {status.retrying}" if status.retrying else ""), \
            "progress"
    if connection is Connection.LIVE and not status.stale_since:
        live = f"● live · {clock_text(as_of)}" if as_of else "● live"
        if status.retrying:  # current data, a struggling server: say both
            return f"{live} · {status.retrying}", "warn"
        if any(gap.required for gap in state.snapshot.gaps):  # live, but not all of it
            return live, "unknown"
        return live, "ok"
    if connection is Connection.CONNECTING and not status.stale_since:
        return "◌ connecting…" + (f" {status.retrying}" if status.retrying else ""), \
            "progress"
    reason = f": {status.message}" if status.message else ""
    if connection is Connection.FAILED:
        return f"✖ disconnected{reason}", "crit"
    if not as_of:
        return f"✖ disconnected, retrying{reason}", "crit"
    since = status.stale_since or as_of
    return (f"✖ stale since {clock_text(since)} ({duration(now - since)}), retrying{reason}",
            "crit")


def policy_part(snapshot: ClusterSnapshot) -> tuple[str, str]:
    """(text, colour role) of the ClusterPolicy part; ``state-`` prefixes dropped."""
    policy = snapshot.cluster_policy
    if "clusterpolicies" in snapshot.loading:
        return "policy loading…", "progress"
    if policy.state == "unknown":  # forbidden, not missing
        return "policy unknown (403)", "unknown"
    if policy.state == "ready":
        return "policy ready", "ok"
    if policy.state == "notReady":
        states = [s.removeprefix("state-") for s in policy.not_ready_states]
        more = f"+{len(states) - 2}" if len(states) > 2 else ""
        return f"policy notReady: {','.join(states[:2])}{more}".rstrip(": "), "crit"
    return f"policy {policy.state}", "warn"


def counts_line(snapshot: ClusterSnapshot, width: int, palette: Palette = PLAIN) -> Text:
    """Line 2: the counts always fit; the policy part gets what is left (then an ellipsis)."""
    counts = snapshot.counts
    gpu_role = "crit" if counts.gpus_allocatable < counts.gpus_total else "ok"
    tail = Text(no_wrap=True)
    if "nodes" in snapshot.loading:  # nothing is known yet: no count is better than 0
        tail.append(" │ loading nodes…", style=palette.colour("progress"))
    elif snapshot.loading:  # nodes known, pipelines and findings not yet
        tail.append(f" │ {counts.gpu_nodes} nodes │ GPUs ")
        tail.append(f"{counts.gpus_allocatable}/{counts.gpus_total}",
                    style=palette.colour(gpu_role))
        tail.append(" │ findings loading…", style=palette.colour("progress"))
    elif any(gap.resource == "nodes" for gap in snapshot.gaps):  # no node list: no count
        tail.append(" │ ? nodes, GPUs and findings unknown",
                    style=palette.colour("unknown"))
    else:
        _append_counts(tail, snapshot, palette)
    policy, policy_role = policy_part(snapshot)
    head = Text(policy, style=palette.colour(policy_role), no_wrap=True)
    head.truncate(max(12, width - tail.cell_len), overflow="ellipsis")
    line = head + tail
    line.truncate(width, overflow="ellipsis")
    return line


def _append_counts(tail: Text, snapshot: ClusterSnapshot, palette: Palette) -> None:
    """Nodes, GPUs allocatable/total, nodes with findings, upgrades (all lists read)."""
    counts = snapshot.counts
    gpu_role = "crit" if counts.gpus_allocatable < counts.gpus_total else "ok"
    findings_role = "warn" if counts.nodes_with_findings else "ok"
    tail.append(f" │ {counts.gpu_nodes} nodes │ GPUs ")
    tail.append(f"{counts.gpus_allocatable}/{counts.gpus_total}",
                style=palette.colour(gpu_role))
    if counts.mig_devices:  # the fleet line says the same of its busy/idle count
        tail.append(f" ({counts.mig_devices} MIG)")
    tail.append(" │ ")
    # nodes with nothing found in what could be read: not "ok", unknown
    unknown = sum(1 for view in snapshot.nodes.values()
                  if (view.unknown or view.health_unknown) and not view.findings)
    if unknown:
        found = counts.nodes_with_findings
        tail.append(f"{found} with findings, {unknown} unknown" if found
                    else "? findings unknown", style=palette.colour("unknown"))
    else:
        tail.append(f"{counts.nodes_with_findings} with findings",
                    style=palette.colour(findings_role))
    tail.append(f" │ {counts.upgrades_in_progress} upgrading")


def gaps_text(gaps: Sequence[ReadGap], short: bool, cut: int = 0) -> str:
    """``⚠ cannot read pods (403): pipelines and GPU pods unknown`` (grouped by status);
    a read that failed for a reason in words is said apart, that reason ``cut`` characters
    shorter: ``metrics: cannot read (503 from the pod proxy on 6 of 6 exporters) · GPU
    health unknown``."""
    coded = [gap for gap in gaps if gap.code]
    parts = []
    if coded:
        by_code: dict[int, list[str]] = {}
        for gap in coded:
            by_code.setdefault(gap.code, []).append(gap.resource)
        what = "; ".join(", ".join(names) + f" ({code})" for code, names in by_code.items())
        hidden = (", " if short else "; ").join(gap.short if short else gap.hides
                                                for gap in coded)
        parts.append(f"cannot read {what}: {hidden} unknown")
    for gap in gaps:
        if not gap.code:
            keep = len(gap.why) - cut - 1 if cut else len(gap.why)
            why = f" ({gap.why[:keep]}{'…' if cut else ''})" if keep >= 12 else ""
            parts.append(f"{gap.resource}: cannot read{why} · "
                         f"{gap.short if short else gap.hides} unknown")
    return "⚠ " + " · ".join(parts)


def gaps_line(snapshot: ClusterSnapshot, width: int, palette: Palette = PLAIN) -> Text:
    """Line 3, only when something could not be read: what, and what it hides (the long
    words when they fit, the short ones at 80 columns, then shorter reasons); a forbidden
    or failing read is never silent."""
    gaps = snapshot.gaps
    text = gaps_text(gaps, short=False)
    if len(text) > width:
        text = gaps_text(gaps, short=True)
    if len(text) > width:
        text = gaps_text(gaps, short=True, cut=len(text) - width)
    unknown = any(gap.required or gap.resource == METRICS for gap in gaps)
    line = Text(text, style=palette.colour("unknown" if unknown else "warn"),
                no_wrap=True)
    line.truncate(width, overflow="ellipsis")
    return line


def render_header(state: HeaderState, width: int, palette: Palette = PLAIN) -> Text:
    """The two header lines for a terminal ``width`` columns wide."""
    snapshot = state.snapshot
    where = snapshot.context or state.status.context or "no context"
    server = snapshot.server or state.status.server
    conn, conn_role = connection_part(state)
    left = f"gputui ▸ {where}"
    # before the server: they matter more (a recording light, as any recorder shows one)
    rec = " ✖ rec stopped" if state.recording_stopped else " ● rec"
    tags = [(text, role) for text, role, on in ((" read-only", "warn", state.read_only),
                                                (rec, "crit", state.recording)) if on]
    tag = "".join(text for text, _ in tags)
    room = width - len(left) - len(tag) - len(conn) - 2
    shown = f" ({server})" if server and room > len(server) + 3 else ""
    line1 = Text(left if tag else left + shown, style="bold", no_wrap=True)
    if tag:
        for text, role in tags:
            line1.append(text, style=palette.role(role))
        line1.append(shown, style="bold")
    line1.append(" " * max(1, width - len(left) - len(shown) - len(tag) - len(conn)))
    line1.append(conn, style=palette.role(conn_role))
    line1.truncate(width, overflow="ellipsis")
    if state.status.connection is Connection.REPLAY:  # never "live": status_header_replay
        line1 = replay_line(where, state.status, width, palette)
    line2 = counts_line(snapshot, width, palette)
    lines = [line1, line2]
    if snapshot.gaps:
        lines.append(gaps_line(snapshot, width, palette))
    if state.fleet is not None:
        lines.append(fleet_line(state.fleet, width, palette,
                                snapshot.counts.gpus_with_health_findings))
    if state.running:
        lines.append(running_line(state.running, width, palette))
    return Text("\n").join(lines)


class StatusHeader(Static):
    """The top two lines of every screen."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = HeaderState()
        self._drawn: Text | None = None

    def update_state(self, snapshot: ClusterSnapshot, status: SourceStatus, now: float,
                     fleet: FleetMetrics | None = None,
                     running: Sequence[Operation] = (), read_only: bool = False,
                     recording: bool = False, recording_stopped: bool = False) -> None:
        """Re-render from the app's latest snapshot, status and clock, if the text changed.

        The app calls this on every applied snapshot and every second; most calls change
        nothing an operator can see, and a repaint is work stolen from the next key press.
        """
        grows = ((fleet is None) != (self.state.fleet is None)  # the fleet line comes or goes
                 or bool(snapshot.gaps) != bool(self.state.snapshot.gaps)  # or the gaps line
                 or bool(running) != bool(self.state.running))  # or the running line
        self.state = HeaderState(snapshot, status, now, fleet, tuple(running), read_only,
                                 recording, recording_stopped)
        if grows or self._drawn is None or self._text() != self._drawn:
            self.refresh(layout=grows)

    def _text(self) -> Text:
        return render_header(self.state, max(20, self.size.width), widget_palette(self))

    def render(self) -> Text:
        self._drawn = self._text()
        return self._drawn


def visible_headers(screens: Sequence[Screen[object]]) -> list[StatusHeader]:
    """The headers of the top screen that has one (``screens``: the app's stack): under a
    dialog, the view's, whose clock and state must keep moving while a plan is read."""
    for screen in reversed(screens):
        headers = list(screen.query(StatusHeader))
        if headers:
            return headers
    return []
