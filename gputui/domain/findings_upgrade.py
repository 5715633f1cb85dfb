"""Upgrade findings that need the cluster's slot figures: ``upgrade-required`` held long
while the upgrade cannot proceed, and the whole controller blocked (``upgrade-blocked``).

A node waiting its turn behind nodes that are upgrading within the policy is a rolling
upgrade's normal life and gets no finding. One that cannot start (its skip label left
behind, autoUpgrade off, the controller blocked, slots held by failed or unavailable nodes)
is a silent failure after ``upgrade_stalled_minutes``: the finding quotes the reason the
upgrades pane gives (``k8s-operator-libs: pkg/upgrade/upgrade_inplace.go``,
``ProcessUpgradeRequiredNodes``; ``common_manager.go``, ``GetUpgradesAvailable``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.model import Finding, NodeUpgradeStatus, NodeView, Severity, UpgradeView
from gputui.domain.thresholds import SOURCES, ThresholdsLike
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_groups import Groups, view_for

_IDLE = frozenset({L.STATE_UNKNOWN, L.STATE_DONE, L.STATE_REQUIRED, L.STATE_FAILED})


def _down_outside_upgrades(view: UpgradeView, nodes: Mapping[str, NodeView]) -> int:
    """Managed nodes cordoned or NotReady for reasons other than a running upgrade step."""
    return sum(1 for name, status in view.nodes.items() if status.state in _IDLE
               and (n := nodes.get(name)) is not None and (n.cordoned or not n.ready))


def _cannot_proceed(view: UpgradeView, status: NodeUpgradeStatus, node: NodeView | None,
                    down_outside: Callable[[], int]) -> bool:
    """The node in ``upgrade-required`` will not start by itself."""
    if status.skip or view.blocked or not view.enabled:
        return True
    if view.available_slots > 0 or (node is not None and node.cordoned):
        return False  # starts at the next pass (pre-cordoned nodes proceed without a slot)
    # no slot: a queue behind upgrading nodes is normal; slots held by failed nodes, or
    # maxUnavailable used up by nodes down for other reasons, do not free themselves
    if view.failed > 0:
        return True
    return view.total > view.max_unavailable > 0 and down_outside() >= view.max_unavailable


def required_stalled(view: UpgradeView, nodes: Mapping[str, NodeView],
                     thresholds: ThresholdsLike, now: float,
                     groups: Groups | None = None) -> list[Finding]:
    """``upgrade-stalled`` for nodes held in ``upgrade-required`` that cannot proceed (judged
    with the node's own NVIDIADriver figures when there are several). Only nodes held past
    the threshold are judged, and the walk over all nodes happens at most once."""
    limit = thresholds.upgrade_stalled_minutes * 60.0
    counted: list[int] = []

    def down_outside() -> int:
        if not counted:
            counted.append(_down_outside_upgrades(view, nodes))
        return counted[0]

    found = []
    for name in view.lanes.get(L.STATE_REQUIRED, ()):
        status = view.nodes.get(name)
        if status is None or status.since is None or now - status.since < limit:
            continue
        node = nodes.get(name)
        own = view_for(node, view, groups or {}) if node is not None else view
        if not _cannot_proceed(own, status, node, down_outside):
            continue
        found.append(Finding(
            C.UPGRADE_STALLED, Severity.WARNING, name,
            f"{name} in upgrade-required for {duration(now - status.since)}: "
            f"{status.wait_reason} (past {thresholds.upgrade_stalled_minutes:g} min, "
            f"{SOURCES['upgrade_stalled_minutes']})",
            "Remove a skip label left behind, retry or fix failed nodes (they hold slots), or "
            "turn autoUpgrade back on; the upgrades pane shows the slot figures.", "upgrade"))
    return found


def upgrade_blocked(view: UpgradeView) -> list[Finding]:
    """The controller makes no transition at all: a driver DaemonSet owns fewer pods than
    its ``desiredNumberScheduled`` (``BuildState``), or ``maxUnavailable`` is invalid."""
    if view.blocked is None or not view.enabled:
        return []
    if view.blocked.startswith("maxUnavailable"):
        hint = "Set maxUnavailable to an integer (2) or a percentage (\"25%\")."
    else:
        hint = ("The DaemonSet controller has not created a pod for some node (see the "
                "DaemonSet's FailedCreate events: quota, admission, a deleted pod not yet "
                "recreated). A Pending pod with no node counts as owned and is skipped, so "
                "NotReady nodes alone do not block; the skip label does not help (gpu-operator "
                "#688).")
    return [Finding(C.UPGRADE_BLOCKED, Severity.CRITICAL, None, view.blocked, hint, "upgrade")]
