"""``upgrade-blocked``: critical only with evidence that the block outlasts a controller cycle.

The upgrade controller's ``BuildState`` (k8s-operator-libs ``pkg/upgrade/upgrade_state.go``)
returns "driver DaemonSet should not have Unscheduled pods" whenever a driver DaemonSet's
``desiredNumberScheduled`` differs from the pods it owns; the cycle is lost and the
controller tries again at its next requeue (every 2 minutes, gpu-operator
``controllers/upgrade_controller.go``, ``plannedRequeueInterval``, and on every node or pod
event). The counts differ for a moment at every driver-pod replacement (the old pod is gone,
the DaemonSet controller has not made the new one yet) and every scale-down (a node left,
the DaemonSet's status not yet updated), so a mismatch seen once is ``info``.

It is ``critical`` with evidence that it lasts:

- gputui itself has seen the mismatch for longer than :data:`BLOCKED_GRACE_SECONDS` (more
  than one requeue), across its own builds;
- the DaemonSet controller failed to create a driver pod within the last
  :data:`FAILED_CREATE_WINDOW_SECONDS` (a ``FailedCreate`` Event on the driver DaemonSet,
  "Error creating: ..." from ``pkg/controller/daemon/daemon_controller.go``): quota,
  admission or a webhook refuses the pod, and it retries with a back-off;
- a node the driver DaemonSet selects has never had a driver pod although it is older than
  that grace: GPU present, ``nvidia.com/gpu.deploy.driver=true``, no driver pod and no
  upgrade-state label (the controller labels every node it manages, so a node without one
  never ran a driver pod the controller saw); a replacement leaves the label on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain import catalogue as C
from gputui.domain import kube
from gputui.domain import labels as L
from gputui.domain.grace import clock
from gputui.domain.inputs import JsonDict
from gputui.domain.model import (
    DaemonSetSummary,
    DriverOwnership,
    Finding,
    NodeView,
    Severity,
    UpgradeView,
)
from gputui.domain.operands_absent import Toleration, untolerated
from gputui.domain.timefmt import duration

#: a mismatch seen longer than this outlasts the controller's 2-minute requeue
BLOCKED_GRACE_SECONDS = 180.0
#: a FailedCreate this recent (its last repeat) still says why pods are missing
FAILED_CREATE_WINDOW_SECONDS = 600.0
_NAMED = 5

_INVALID_HINT = "Set maxUnavailable to an integer (2) or a percentage (\"25%\")."
_HINT = ("The DaemonSet controller has not created a pod for some node (see the DaemonSet's "
         "FailedCreate events: quota, admission, a deleted pod not yet recreated). A Pending "
         "pod with no node counts as owned and is skipped, so NotReady nodes alone do not "
         "block; the skip label does not help (gpu-operator #688).")
_WAIT_HINT = ("Nothing to do yet: the counts differ for a moment whenever a driver pod is "
              "replaced or a node leaves, and the controller retries at its next cycle.")


def seen_since(since: float | None, view: UpgradeView, now: float) -> float | None:
    """Since when the driver DaemonSet's pods have been seen to differ from desired: kept
    while they do, None once they match (or the block is an invalid policy); ``now`` when it
    is first seen or when a replay stepped back before ``since``."""
    if view.blocked is None or view.blocked.startswith("maxUnavailable"):
        return None
    return now if since is None or since > now else since


def failed_creates(events: Sequence[JsonDict], daemonsets: Sequence[DaemonSetSummary],
                   now: float) -> list[str]:
    """Messages of the driver DaemonSets' ``FailedCreate`` Events repeated within the window
    ("nvidia-driver-daemonset: Error creating: pods ... is forbidden: exceeded quota")."""
    drivers = {ds.name for ds in daemonsets if ds.operand == "driver"}
    found = []
    for event in events:
        involved = kube.sub(event, "involvedObject")
        if event.get("reason") != "FailedCreate" or involved.get("kind") != "DaemonSet":
            continue
        name = str(involved.get("name") or "")
        when = kube.parse_time(event.get("lastTimestamp")) or kube.parse_time(
            event.get("eventTime")) or kube.parse_time(event.get("firstTimestamp"))
        if name in drivers and when is not None and now - when <= FAILED_CREATE_WINDOW_SECONDS:
            found.append(f"{name}: {event.get('message', '')}")
    return sorted(set(found))


def podless_nodes(nodes: Mapping[str, NodeView], now: float,
                  tolerations: Sequence[Toleration] | None = None,
                  grace: float = BLOCKED_GRACE_SECONDS) -> list[str]:
    """Nodes the driver DaemonSet selects that never got a driver pod, older than ``grace``.

    A driver pod being replaced leaves the node's upgrade-state label in place, so such a
    node is not counted here: only gputui's own observation can tell how long that lasts.
    A node with a taint the operand pods do not tolerate is in no ``desiredNumberScheduled``
    (``gpu-node-unmanaged`` names it), so it is no evidence either.
    """
    found = []
    for name, node in nodes.items():
        if not node.gpu_present or node.upgrade_state or node.created is None:
            continue
        if untolerated(node.taints, tolerations or ()):
            continue
        if node.driver_ownership is not DriverOwnership.OPERATOR:
            continue
        if node.labels.get(L.DEPLOY_DRIVER) != "true" or now - node.created < grace:
            continue
        stage = node.pipeline.stage("driver")
        if stage is None or stage.pod is None:
            found.append(name)
    return sorted(found)


def upgrade_blocked(view: UpgradeView, seen_since: float | None = None,
                    podless: Sequence[str] = (), now: float = 0.0,
                    failed: Sequence[str] = ()) -> list[Finding]:
    """The controller makes no transition: ``maxUnavailable`` is invalid (critical: it stays
    so until someone edits the policy), or a driver DaemonSet owns a different number of
    pods than desired (critical with evidence that it lasts, ``info`` before).

    ``seen_since``: when gputui first saw the mismatch in this session (None: not seen
    before this build); ``podless``: :func:`podless_nodes`; ``failed``: :func:`failed_creates`.
    """
    if view.blocked is None or not view.enabled:
        return []
    if view.blocked.startswith("maxUnavailable"):
        return [C.finding(C.UPGRADE_BLOCKED, None, view.blocked, _INVALID_HINT)]
    seen = now - seen_since if seen_since is not None else 0.0
    evidence = []
    if failed:
        evidence.append(f"FailedCreate {failed[0][:300]}" + (
            f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""))
    if seen > BLOCKED_GRACE_SECONDS:
        evidence.append(f"seen for {duration(seen)}")
    if podless:
        shown = ", ".join(podless[:_NAMED]) + (
            f" and {len(podless) - _NAMED} more" if len(podless) > _NAMED else "")
        evidence.append(f"never got a driver pod, older than {duration(BLOCKED_GRACE_SECONDS)}:"
                        f" {shown}")
    if evidence:
        return [C.finding(C.UPGRADE_BLOCKED, None,
                          f"{view.blocked} ({'; '.join(evidence)})", _HINT)]
    start = seen_since if seen_since is not None else now
    return [C.finding(
        C.UPGRADE_BLOCKED, None,
        f"{view.blocked}; normal for a moment while a driver pod is replaced or a node "
        f"leaves (BuildState retries every cycle): critical if it lasts past "
        f"{clock(start + BLOCKED_GRACE_SECONDS)}", _WAIT_HINT, severity=Severity.INFO)]


def judge_blocked(since: float | None, view: UpgradeView, nodes: Mapping[str, NodeView],
                  now: float, events: Sequence[JsonDict], daemonsets: Sequence[DaemonSetSummary],
                  tolerations: Sequence[Toleration] | None
                  ) -> tuple[float | None, list[Finding]]:
    """(the new ``seen_since``, ``upgrade-blocked``) for one build: a builder keeps the time
    across builds (its own observation); the evidence is gathered only while blocked."""
    since = seen_since(since, view, now)
    if since is None:  # nothing to weigh: no walk over every node
        return None, upgrade_blocked(view)
    return since, upgrade_blocked(view, since, podless_nodes(nodes, now, tolerations), now,
                                  failed_creates(events, daemonsets, now))
